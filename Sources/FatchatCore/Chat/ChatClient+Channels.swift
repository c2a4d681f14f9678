import Foundation
import RecordStore
import SyncEngine

extension ChatClient {
    // MARK: The channel shown last

    static let shownMarkerType = "ShownChannel"
    static let shownMarkerID = RecordID(recordName: "shown.last")

    /// Remembers, in my private data, the channel on screen as the client exits; the next start opens it first.
    public func rememberShown(_ name: ChannelName) throws {
        var marker = (try? container.privateDatabase.record(for: Self.shownMarkerID))
            ?? Record(recordType: Self.shownMarkerType, recordID: Self.shownMarkerID)
        guard marker["channel"]?.stringValue != name.display else { return }
        marker["channel"] = .string(name.display)
        try container.privateDatabase.save(marker, savePolicy: .allKeys)
    }

    /// The channel `rememberShown` kept, if it still exists and I am still in it.
    public func rememberedChannel() -> Channel? {
        guard let text = (try? container.privateDatabase.record(for: Self.shownMarkerID))?["channel"]?.stringValue,
              let name = try? ChannelName(text), let channel = try? self.channel(name), (try? isMember(of: channel)) == true else { return nil }
        return channel
    }

    /// Every channel, oldest first, as the original app lists them.
    public func channels() throws -> [Channel] {
        try Self.channels(in: container)
    }

    /// Every channel in `container`'s public database, oldest first, without starting a client
    /// (shell completion lists them this way). Only the fields a `Channel` holds are read.
    public static func channels(in container: Container) throws -> [Channel] {
        var channels: [Channel] = []
        var cursor: QueryCursor?
        let query = Query(recordType: ChatSchema.channelType, sortDescriptors: [try QuerySortDescriptor(key: "creationDate")])
        repeat {
            let page = try container.publicDatabase.records(matching: query, desiredKeys: Channel.fieldKeys, resultsLimit: 1000, cursor: cursor)
            channels += page.records.compactMap(Channel.init)
            cursor = page.cursor
        } while cursor != nil
        return channels
    }

    /// One channel, or `nil` if there is none by that name; one this user's outbox is still creating counts.
    ///
    /// The public database is read again after the outbox: the engine may send the channel, and
    /// take it out of the outbox, between the first two reads (a first run that joins #general
    /// and opens it at once, on a busy machine, saw neither).
    public func channel(_ name: ChannelName) throws -> Channel? {
        if let stored = try storedChannel(name) { return stored }
        if let queued = try queuedChannel(name.recordID) { return queued }
        return try storedChannel(name)
    }

    /// The channel as the public database holds it.
    private func storedChannel(_ name: ChannelName) throws -> Channel? {
        do {
            return Channel(try container.publicDatabase.record(for: name.recordID))
        } catch let error as StoreError where error.code == .unknownItem {
            return nil
        }
    }

    /// A channel that waits in the outbox to be created, as it will read once it is.
    private func queuedChannel(_ id: RecordID) throws -> Channel? {
        guard let entry = try engine.outboxEntry(for: id), entry.operation == .save, let record = entry.record,
              let channel = Channel(record) else { return nil }
        return Channel(name: channel.name, topic: channel.topic, creator: user, created: Date(), recordID: id)
    }

    /// The channel or a clear error.
    public func existingChannel(_ name: ChannelName) throws -> Channel {
        guard let channel = try channel(name) else {
            throw CommandError("There is no channel \(name); /join \(name.display) creates it.")
        }
        return channel
    }

    /// Creates a channel; `CommandError` if the name is taken.
    @discardableResult
    public func createChannel(_ name: ChannelName, topic: String? = nil) throws -> Channel {
        let record = Self.channelRecord(name, topic: topic)
        do {
            let saved = try container.publicDatabase.save(record)
            guard let channel = Channel(saved) else { throw CommandError("Channel \(name) could not be read back.") }
            return channel
        } catch let error as StoreError where error.code == .serverRecordChanged || error.code == .permissionFailure {
            // Taken by this user earlier (a tag conflict) or by someone else (not theirs to change).
            throw Self.alreadyExists(name)
        }
    }

    static func alreadyExists(_ name: ChannelName) -> CommandError {
        CommandError("Channel \(name) already exists; /join \(name.display) to join it.")
    }

    /// Joins a channel, creating it if it does not exist, as IRC does. Returns whether this call queued its creation.
    ///
    /// Everything goes through the outbox, the channel included: a channel
    /// that someone else creates before it is sent counts as created, so two
    /// users who join a new channel at once both get in; the channel then
    /// keeps its creator's topic, not `topic`.
    @discardableResult
    public func join(_ name: ChannelName, topic: String? = nil) throws -> (channel: Channel, created: Bool) {
        var changes: [OutgoingChange] = []
        let channel: Channel
        var created = false
        if let existing = try self.channel(name) {
            channel = existing
        } else {
            let record = Self.channelRecord(name, topic: topic)
            changes.append(.create(record))
            channel = Channel(name: name, topic: topic ?? "", creator: user, created: Date(), recordID: record.recordID)
            created = true
        }
        let id = Member.recordID(channel: channel.name, user: userRecordID)
        // Joining again (another terminal, a new handle) updates the stored membership rather than conflicting with it.
        var membership = (try? container.publicDatabase.record(for: id)) ?? Record(recordType: ChatSchema.membershipType, recordID: id)
        if membership["handle"]?.stringValue != handle || membership.recordChangeTag == nil {
            membership["channel"] = .reference(Reference(recordID: channel.recordID, action: .deleteSelf))
            membership["user"] = .string(user.rawValue)
            membership["handle"] = .string(handle)
            changes.append(.save(membership, .ifServerRecordUnchanged))
        }
        if !changes.isEmpty { try engine.send(changes) }
        // A channel made here, or still waiting in the outbox, has no stored creation date to tie the subscription to yet.
        let stored = try !created && engine.state(of: channel.recordID) != .pending
        try Subscriptions(client: self).subscribe(to: channel, confirmedCreation: stored)
        return (channel, created)
    }

    /// A new channel's record.
    static func channelRecord(_ name: ChannelName, topic: String?) -> Record {
        var record = Record(recordType: ChatSchema.channelType, recordID: name.recordID)
        record["name"] = .string(name.display)
        record["topic"] = .string(topic ?? "")
        return record
    }

    /// Whether this user is a member of the channel (or has a join on its way).
    func isMember(of channel: Channel) throws -> Bool {
        let id = Member.recordID(channel: channel.name, user: userRecordID)
        if try engine.state(of: id) == .pending { return true }
        return (try? container.publicDatabase.record(for: id, desiredKeys: [])) != nil
    }

    /// Leaves a channel: removes the membership and the subscription.
    public func leave(_ name: ChannelName) throws {
        recentlyJoined.withLock { _ = $0.removeValue(forKey: name) }
        let channel = try existingChannel(name)
        try engine.send(deleting: [Member.recordID(channel: channel.name, user: userRecordID)])
        try Subscriptions(client: self).unsubscribe(from: channel)
    }

    /// Deletes a channel with its messages and memberships; only its creator may.
    /// `queued` sends the delete through the outbox: a failure then arrives as a `sendFailed` event.
    public func deleteChannel(_ name: ChannelName, queued: Bool = false) throws {
        recentlyJoined.withLock { _ = $0.removeValue(forKey: name) }
        let channel = try existingChannel(name)
        guard channel.creator == user else {
            throw CommandError("Only the creator of \(name) (\(channel.creator?.rawValue ?? "someone else")) can delete it.")
        }
        if queued {
            try engine.send(deleting: [channel.recordID])
        } else {
            try container.publicDatabase.deleteRecord(withID: channel.recordID)
        }
        try? Subscriptions(client: self).unsubscribe(from: channel)
    }

    /// Sets a channel's topic; only its creator may.
    /// `queued` sends it through the outbox: a failure then arrives as a `sendFailed` event.
    public func setTopic(_ topic: String, of name: ChannelName, queued: Bool = false) throws {
        let channel = try existingChannel(name)
        guard channel.creator == user else {
            throw CommandError("Only the creator of \(name) can set its topic.")
        }
        if queued, let entry = try engine.outboxEntry(for: channel.recordID), entry.createsOnly, var creating = entry.record {
            // Not created yet: a save of the topic alone would replace the creation in the outbox.
            creating["topic"] = .string(topic)
            try engine.send([.create(creating)])
            return
        }
        var record = Record(recordType: ChatSchema.channelType, recordID: channel.recordID)
        record["topic"] = .string(topic)
        if queued {
            try engine.send(saving: [record], savePolicy: .changedKeys)
        } else {
            try container.publicDatabase.save(record, savePolicy: .changedKeys)
        }
    }

    /// Who is in a channel, from its memberships, in order of joining.
    public func members(of name: ChannelName) throws -> [Member] {
        let channel = try existingChannel(name)
        let query = Query(recordType: ChatSchema.membershipType,
                          predicate: try QueryPredicate(format: "channel == %@", channel.recordID),
                          sortDescriptors: [try QuerySortDescriptor(key: "creationDate")])
        return try container.publicDatabase.records(matching: query, resultsLimit: 10_000).records.compactMap(Member.init)
    }

    /// The channels this user is a member of, oldest channel first; joins still in the outbox count.
    public func joinedChannels() throws -> [Channel] {
        let query = Query(recordType: ChatSchema.membershipType, predicate: try QueryPredicate(format: "user == %@", user.rawValue))
        // My memberships and every channel are two reads of their own, each of milliseconds when there are
        // hundreds of channels: they are read at once, and the client starts that much sooner.
        // Of a membership, only the channel is used.
        let (stored, all) = try OnAllCores.both(
            { [container] in try container.publicDatabase.records(matching: query, desiredKeys: ["channel"], resultsLimit: 10_000).records },
            { [container] in try Self.channels(in: container) })
        let queued = try engine.outboxEntries().filter { $0.state == .pending && $0.recordType == ChatSchema.membershipType }.compactMap(\.record)
        let keys = Set((stored + queued).compactMap { $0["channel"]?.referenceValue?.recordID })
        let joined = all.filter { keys.contains($0.recordID) }
        let known = Set(joined.map(\.recordID))
        return try joined + keys.subtracting(known).sorted { $0.recordName < $1.recordName }.compactMap(queuedChannel)
    }
}
