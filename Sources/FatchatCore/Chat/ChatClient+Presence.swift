import Foundation
import RecordStore

extension ChatClient {
    /// Writes my presence over the last one, soon and off the caller's thread.
    ///
    /// The same state and reason again is a heartbeat: it only moves `seen` on, which no one needs
    /// within the minute, so it goes as a quiet commit and wakes no other client.
    public func publishPresence(_ state: PresenceState, reason: String = "", at now: Date = Date()) {
        let presence = Presence(user: user, handle: handle, state: state, reason: reason, seen: now)
        let heartbeat = lastPresence.withLock { last in
            defer { last = (state, reason) }
            return last?.state == state && last?.reason == reason
        }
        var record = presence.record(for: userRecordID)
        if let keys = container.accountKeys {
            // Without a proof, readers check the record's own signature instead.
            try? presenceChain.withLock { try $0.prove(&record, at: now, creator: userRecordID.recordName, keys: keys) }
        }
        ephemeral.submit(record, quietly: heartbeat)
    }

    /// Says that I am typing in `channel`, soon and off the caller's thread; never a message.
    public func announceTyping(in channel: ChannelName, at now: Date = Date()) {
        ephemeral.submit(TypingNotice(user: user, handle: handle, channel: channel, at: now).record(for: userRecordID))
    }

    /// Waits at most `timeout` seconds for presence and typing writes to go out (an exiting client's "offline").
    @discardableResult
    public func flushEphemeral(timeout: Double) -> Bool { ephemeral.flush(timeout: timeout) }

    /// How many presence and typing saves this client made, for the benchmark.
    public var ephemeralWrites: Int { ephemeral.writes }

    /// Whether others' presence comes in as events (the default). An app that shows it nowhere (a
    /// screen whose member list is hidden) turns it off: each heartbeat of each member is then not
    /// read at all, which with a hundred people was most of an idle client's work. Turned on again,
    /// only later changes come in: read the presence that is there now with ``allPresence()``.
    public func followPresence(_ on: Bool) {
        engine.passOver(recordTypes: on ? [] : [Presence.recordType])
    }

    /// Every presence in the container that its key vouches for, read now.
    public func allPresence() throws -> [UserID: Presence] {
        var found: [UserID: Presence] = [:]
        let query = Query(recordType: Presence.recordType)
        var cursor: QueryCursor?
        repeat {
            let page = try container.publicDatabase.records(matching: query, resultsLimit: 400, cursor: cursor)
            for record in page.records {
                if let presence = presence(from: record), (found[presence.user]?.seen ?? .distantPast) <= presence.seen {
                    found[presence.user] = presence
                }
            }
            cursor = page.cursor
        } while cursor != nil
        return found
    }

    /// The presence of each of `users` that has one its key vouches for.
    public func presence(of users: [UserID]) throws -> [UserID: Presence] {
        guard !users.isEmpty else { return [:] }
        var found: [UserID: Presence] = [:]
        for start in stride(from: 0, to: users.count, by: 400) {
            let ids = users[start..<min(users.count, start + 400)].map { Presence.recordID(for: $0.recordID) }
            for case .success(let record) in try container.publicDatabase.records(for: ids).values {
                if let presence = presence(from: record) { found[presence.user] = presence }
            }
        }
        return found
    }

    /// A presence read from a record, only if its creator's key vouches for it: through the record's
    /// hash-chain proof (`PresenceProof`), which costs a few hashes for a heartbeat, or, for a record
    /// written without one, through the record's own signature.
    func presence(from record: Record) -> Presence? {
        guard var presence = Presence(record) else { return nil }
        guard let proof = PresenceProof(record) else { return vouches(for: record) ? presence : nil }
        guard let keys = container.accountKeys,
              let until = presenceChains.vouchedUntil(record, creator: presence.user.rawValue, proof: proof, keys: keys) else { return nil }
        presence.seen = min(presence.seen, until)
        return presence
    }

    /// A typing notice read from a record, only if its creator's key vouches for it.
    func typing(from record: Record) -> TypingNotice? {
        guard let notice = TypingNotice(record), vouches(for: record) else { return nil }
        return notice
    }

    /// Whether the record's creator signed it as it is: a row someone wrote into the
    /// file in another's name does not make them look present or typing.
    ///
    /// The verdict is not kept on disk: a heartbeat or a typing notice is checked once, as it arrives
    /// or as `/who` reads it, and the next one replaces it.
    private func vouches(for record: Record) -> Bool {
        container.accountKeys?.check(record, keep: false).isVerified ?? false
    }
}
