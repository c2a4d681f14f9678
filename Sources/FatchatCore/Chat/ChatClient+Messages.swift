import Foundation
import RecordStore
import SyncEngine

extension ChatClient {
    /// The longest text a message may have; the record limit leaves room for the other fields.
    public static let maximumTextBytes = 64 * 1024

    /// Queues a message to a channel, joining (and if needed creating) it first. Returns the message as queued.
    /// `action` makes it an action (`/me`), shown as `* alice text`.
    @discardableResult
    public func post(_ text: String, to name: ChannelName, action: Bool = false) throws -> Message {
        try checkText(text)
        let channel = try joinedChannel(name)
        return try queue(Message.record(text: text, handle: handle, in: channel.name, action: action), creating: nil)
    }

    /// Queues a reply to a message of the channel `name` (MESSAGE as `/edit` takes it).
    @discardableResult
    public func reply(to reference: String, text: String, in name: ChannelName) throws -> Message {
        try checkText(text)
        let parent = try resolveMessage(reference, in: name)
        guard parent.channel == name.id else {
            throw CommandError("Message \(parent.shortID) is in #\(Sanitizer.inert(parent.channelName)); replies stay in the parent's channel.")
        }
        let channel = try joinedChannel(name)
        return try queue(Message.record(text: text, handle: handle, in: channel.name, replyTo: parent.id), creating: nil)
    }

    /// A message by its whole ID, mine while unsent included; `nil` when it does not exist (deleted, say).
    public func message(_ id: MessageID) throws -> Message? {
        if let pending = try outgoing(in: nil).first(where: { $0.outgoing.message.id == id }) { return pending.outgoing.message }
        do {
            return message(from: try container.publicDatabase.record(for: id.recordID))
        } catch let error as StoreError where error.code == .unknownItem {
            return nil
        }
    }

    /// Queues a message before anything reads or writes the shared file, then joins the channel on a
    /// thread of its own, waiting for that at most `timeout` seconds. Returns the message as queued.
    ///
    /// For a process that posts one line and exits: another process's lock on
    /// the file can hold up opening it, and a line typed meanwhile must not be
    /// lost if this process is killed. The channel is queued along with the
    /// message, created only if it does not exist, so the message always has
    /// a channel to go to; a join that did not finish happens on a later post.
    public func postBeforeJoining(_ text: String, to name: ChannelName, joinWithin timeout: Double) throws -> Message {
        try checkText(text)
        let creating = try engine.outboxEntry(for: name.recordID) == nil ? Self.channelRecord(name, topic: nil) : nil
        let message = try queue(Message.record(text: text, handle: handle, in: name), creating: creating)
        let joined = DispatchSemaphore(value: 0)
        NamedThread.start("fatchat.join") { [self] in
            _ = try? joinedChannel(name)
            joined.signal()
        }
        _ = joined.wait(timeout: .now() + max(0, timeout))
        return message
    }

    /// Puts a new message in the outbox, after the channel it needs when that is given;
    /// returns it as it reads until sent: mine, dated now.
    private func queue(_ record: Record, creating channel: Record?) throws -> Message {
        guard var message = Message(record) else { throw CommandError("The message could not be read back.") }
        remember(record)
        try engine.send((channel.map { [OutgoingChange.create($0)] } ?? []) + [.save(record, .ifServerRecordUnchanged)])
        message.sender = user
        message.date = Date()
        return message
    }

    /// The channel, after joining it if this user is not a member yet.
    ///
    /// What was found is trusted for a second, so that a burst of posts (a bot,
    /// a paste) does not read the channel and the membership again for each
    /// line. A channel deleted by another client within that second fails at
    /// send time instead, with a `sendFailed` event, as its reference is gone.
    private func joinedChannel(_ name: ChannelName) throws -> Channel {
        let now = ContinuousClock.now
        if let recent = recentlyJoined.withLock({ $0[name] }), now - recent.seen < .seconds(1) { return recent.channel }
        let channel: Channel
        if let existing = try self.channel(name), try isMember(of: existing) {
            channel = existing
        } else {
            channel = try join(name).channel
        }
        recentlyJoined.withLock { $0[name] = (channel, now) }
        return channel
    }

    func checkText(_ text: String) throws(CommandError) {
        guard text.utf8.count <= Self.maximumTextBytes else {
            throw CommandError("The message is \(text.utf8.count) bytes; a message holds at most \(Self.maximumTextBytes). Split it, or /attach it as a file.")
        }
    }

    /// Queues a file as a message with an attachment.
    @discardableResult
    public func attach(_ path: String, to name: ChannelName) throws -> Message {
        let url = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
        do {
            try Asset.checkSource(url)
        } catch let error as StoreError {
            throw CommandError("Cannot attach \(path): \(error.message)")
        }
        let channel = try joinedChannel(name)
        return try queue(Message.record(text: url.lastPathComponent, handle: handle, in: channel.name,
                                        attachment: Asset(fileURL: url), type: Self.mediaType(of: url)), creating: nil)
    }

    static func mediaType(of url: URL) -> String {
        switch url.pathExtension.lowercased() {
        case "txt", "md", "log": "text/plain"
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        case "pdf": "application/pdf"
        case "json": "application/json"
        default: "application/octet-stream"
        }
    }

    /// Finds a message by its short ID (4+ characters) or `last` (my newest), in one channel or everywhere.
    ///
    /// Messages still in the outbox count too, so that a message can be
    /// edited or deleted before it was sent.
    public func resolveMessage(_ reference: String, in name: ChannelName?) throws -> Message {
        try resolve(reference, in: name).message
    }

    /// The message and the record to change: the outbox copy while unsent, else the stored one.
    private func resolve(_ reference: String, in name: ChannelName?) throws -> (message: Message, record: Record, pending: Bool) {
        let lowered = reference.lowercased()
        if let back = Self.othersBack(lowered) { return try resolveOthers(back, in: name) }
        let isLast = lowered == "last"
        guard isLast || (lowered.count >= 4 && lowered.allSatisfy(\.isHexDigit)) else {
            throw CommandError("'\(reference)' is not a message reference. \(CommandGrammar.messageReferenceHelp)")
        }
        let pending = try outgoing(in: name).reversed().first {
            !$0.outgoing.failed && (isLast || $0.outgoing.message.id.rawValue.hasPrefix(lowered))
        }
        if let pending { return (pending.outgoing.message, pending.record, true) }

        let query: Query
        if isLast {
            var predicate = "creatorUserRecordID == %@"
            var arguments: [any PredicateArgument] = [userRecordID]
            if let name {
                predicate += " AND channel == %@"
                arguments.append(name.recordID)
            }
            query = Query(recordType: ChatSchema.messageType, predicate: try QueryPredicate(format: predicate, argumentArray: arguments),
                          sortDescriptors: [.newestFirst])
        } else {
            query = Query(recordType: ChatSchema.messageType, predicate: try QueryPredicate(format: "recordID BEGINSWITH %@", lowered))
        }
        let found = try container.publicDatabase.records(matching: query, resultsLimit: 2).records
        guard let record = found.first, let message = message(from: record) else {
            throw CommandError(isLast ? "You have not sent a message\(name.map { " in \($0)" } ?? "") yet." : "No message has the ID \(reference).")
        }
        guard isLast || found.count == 1 else { throw CommandError("Several messages start with \(reference); type more of the ID.") }
        return (message, record, false)
    }

    /// The most messages `^N` reaches back.
    static let othersBackLimit = 50

    /// N in `^` (1) or `^N`, or nil when the reference is something else.
    static func othersBack(_ reference: String) -> Int? {
        guard reference.hasPrefix("^") else { return nil }
        let digits = reference.dropFirst()
        return digits.isEmpty ? 1 : Int(digits)
    }

    /// `^N`: the Nth newest message in the channel from someone other than me, so that a reply or a
    /// reaction needs no ID when it answers what was just said.
    private func resolveOthers(_ back: Int, in name: ChannelName?) throws -> (message: Message, record: Record, pending: Bool) {
        guard let name else { throw CommandError("^N names a message in a channel; join one first.") }
        guard (1...Self.othersBackLimit).contains(back) else {
            throw CommandError("^N reaches back 1 to \(Self.othersBackLimit) messages, not \(back).")
        }
        let predicate = try QueryPredicate(format: "channel == %@ AND creatorUserRecordID != %@", argumentArray: [name.recordID, userRecordID])
        let query = Query(recordType: ChatSchema.messageType, predicate: predicate, sortDescriptors: [.newestFirst])
        let found = try container.publicDatabase.records(matching: query, resultsLimit: back).records.compactMap { record in
            message(from: record).map { (message: $0, record: record) }
        }
        guard found.count == back, let chosen = found.last else {
            throw CommandError(found.isEmpty ? "Nobody else has written in #\(name.display) yet."
                               : "#\(name.display) has only \(found.count) message\(found.count == 1 ? "" : "s") from others.")
        }
        return (chosen.message, chosen.record, false)
    }

    /// Replaces the text of a message I sent; the change tag decides conflicts.
    public func edit(_ reference: String, text: String, in name: ChannelName?) throws {
        try checkText(text)
        var (message, record, pending) = try resolve(reference, in: name)
        guard message.sender == user else { throw CommandError("You can only edit your own messages.") }
        record["text"] = .string(text)
        if !pending { record["edited"] = 1 }
        message.text = text
        try engine.send(saving: [record])
    }

    /// Deletes a message I sent. An unsent one is replaced in the outbox by the delete,
    /// which is harmless if the message went out meanwhile or never did.
    public func deleteMessage(_ reference: String, in name: ChannelName?) throws {
        let message = try resolve(reference, in: name).message
        guard message.sender == user else { throw CommandError("You can only delete your own messages.") }
        try engine.send(deleting: [message.id.recordID])
    }

    /// Copies a message's attachment to `path`.
    public func saveAttachment(of reference: String, to path: String, in name: ChannelName?) throws {
        let message = try resolveMessage(reference, in: name)
        guard let asset = message.attachment else { throw CommandError("Message \(message.shortID) has no attachment.") }
        let target = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
        do {
            try container.publicDatabase.copyAsset(asset, to: target)
        } catch let error as StoreError {
            throw CommandError("Cannot save the attachment of \(message.shortID): \(error.message)")
        }
    }

    /// Messages containing every word of `text`, ignoring case and accents; newest first.
    public func search(_ text: String, limit: Int = 50) throws -> [Message] {
        let words = text.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init)
        guard !words.isEmpty else { throw CommandError("usage: /search WORDS… (letters or digits to look for)") }
        let format = Array(repeating: "self CONTAINS %@", count: words.count).joined(separator: " AND ")
        let query = Query(recordType: ChatSchema.messageType, predicate: try QueryPredicate(format: format, argumentArray: words),
                          sortDescriptors: [.newestFirst])
        return messages(from: try container.publicDatabase.records(matching: query, resultsLimit: limit).records)
    }
}
