import Foundation
import RecordStore
import SyncEngine

extension ChatClient {
    /// Seals `text` to `recipient` (an account name, a user name, or a handle that names one account)
    /// and to myself, and queues it. Returns the message as it reads until sent.
    @discardableResult
    public func sendDirectMessage(_ text: String, to recipient: String) throws -> DirectMessage {
        try checkText(text)
        guard let keys = container.accountKeys else {
            throw CommandError("This account has no identity key, so it cannot seal a direct message; see the warning at startup.")
        }
        let peer = try resolveAccount(recipient)
        let name = (0..<4).map { _ in String(format: "%04x", UInt16.random(in: 0...UInt16.max)) }.joined()
        let me = userRecordID.recordName
        let context = DirectMessage.context(from: me, to: peer.rawValue, name: name)
        let plaintext = DirectMessage.plaintext(handle: handle, text: text)
        var record = Record(recordType: ChatSchema.directMessageType, recordID: RecordID(recordName: name))
        do {
            record[DirectMessage.recipientKey] = .string(peer.rawValue)
            record[DirectMessage.forRecipientKey] = .bytes(try keys.seal(plaintext, to: peer.rawValue, context: context))
            record[DirectMessage.forSenderKey] = .bytes(try keys.seal(plaintext, to: me, context: context))
        } catch let error as StoreError {
            throw CommandError(error.message)
        }
        remember(record)
        try engine.send([.save(record, .ifServerRecordUnchanged)])
        return DirectMessage(id: MessageID(record.recordID), from: user, to: peer, handle: handle, text: text, date: Date())
    }

    /// The account `name` stands for: an account name as is, else the one account whose user name it is, else the
    /// one account that goes by it as a handle among those who published a key. A clear error when there is none.
    public func resolveAccount(_ name: String) throws -> UserID {
        let bare = name.hasPrefix("@") ? String(name.dropFirst()) : name
        let byName = accounts(named: bare)
        if byName.count == 1, let only = byName.first { return only }
        if byName.count > 1 {
            throw CommandError("Several accounts are called \(bare): \(byName.map(\.rawValue).joined(separator: ", ")); use the whole account name.")
        }
        let profiles = (try? container.publicDatabase.records(
            matching: Query(recordType: ChatSchema.userType, predicate: try QueryPredicate(format: "handle == %@", bare)),
            desiredKeys: ["handle"], resultsLimit: 3).records) ?? []
        let owners = Set(profiles.map { UserID($0.recordID) })
        if owners.count == 1, let only = owners.first { return only }
        if owners.count > 1 { throw CommandError("Several accounts go by \(bare); use the account's user name.") }
        throw CommandError("Nobody called \(bare) has published a key here, so a direct message cannot be sealed to them yet.")
    }

    /// A direct message read from a record, if it is to or from me and opens; nil for anyone else's.
    func directMessage(from record: Record) -> DirectMessage? {
        guard let creator = record.creatorUserRecordID?.recordName else { return nil }
        return open(record, creator: creator)
    }

    /// Opens a direct message record that `creator` made; my own copy if I made it, else the recipient's.
    private func open(_ record: Record, creator: String) -> DirectMessage? {
        guard record.recordType == ChatSchema.directMessageType, let keys = container.accountKeys,
              let to = record[DirectMessage.recipientKey]?.stringValue else { return nil }
        let me = userRecordID.recordName
        guard creator == me || to == me else { return nil }
        let sealedKey = creator == me ? DirectMessage.forSenderKey : DirectMessage.forRecipientKey
        let context = DirectMessage.context(from: creator, to: to, name: record.recordID.recordName)
        guard case .bytes(let sealed) = record[sealedKey],
              let plaintext = keys.open(sealed, from: creator, context: context),
              let (handle, text) = DirectMessage.parse(plaintext) else { return nil }
        return DirectMessage(id: MessageID(record.recordID), from: UserID(rawValue: creator), to: UserID(rawValue: to), handle: handle, text: text,
                             date: record.creationDate ?? Date(), verified: keys.check(record).isVerified)
    }

    /// The newest `limit` direct messages between me and `peer` (resolved as ``resolveAccount(_:)`` does), oldest first.
    public func directMessages(with peer: String, limit: Int = 50) throws -> (peer: UserID, messages: [DirectMessage]) {
        let other = try resolveAccount(peer)
        return (other, try directMessages(with: other, limit: limit).messages)
    }

    /// The newest `limit` direct messages between me and `peer`, or those before `older`; oldest first.
    public func directMessages(with peer: UserID, limit: Int = 50, older cursor: HistoryCursor? = nil) throws -> HistoryPage<DirectMessage> {
        let page = try records(cursor, else: try conversationQuery(peer, sortedBy: .newestFirst), limit: limit)
        return HistoryPage(messages: page.records.compactMap(directMessage(from:)).reversed(), older: page.cursor.map(HistoryCursor.init))
    }

    /// The oldest `limit` direct messages between me and `peer`, or those after `newer`; oldest first.
    /// `newer` is `nil` in the result when the page reaches the newest message.
    public func directMessagesFromStart(with peer: UserID, limit: Int = 50,
                                        newer cursor: HistoryCursor? = nil) throws -> (messages: [DirectMessage], newer: HistoryCursor?) {
        let page = try records(cursor, else: try conversationQuery(peer, sortedBy: try QuerySortDescriptor(key: "creationDate")), limit: limit)
        return (page.records.compactMap(directMessage(from:)), page.cursor.map(HistoryCursor.init))
    }

    /// The direct messages between me and `other`, either way.
    private func conversationQuery(_ other: UserID, sortedBy order: QuerySortDescriptor) throws -> Query {
        let format = "((creatorUserRecordID == %@ AND recipient == %@) OR (creatorUserRecordID == %@ AND recipient == %@))"
        let arguments: [any PredicateArgument] = [userRecordID, other.rawValue, other.recordID, userRecordID.recordName]
        return Query(recordType: ChatSchema.directMessageType, predicate: try QueryPredicate(format: format, argumentArray: arguments),
                     sortDescriptors: [order])
    }

    /// The accounts I have a direct conversation with, by account name: those of the newest `scan` direct
    /// messages to or from me that open (so that rows someone wrote into the file list nobody), and every
    /// conversation whose read marker I keep, however old.
    public func conversations(scan: Int = 500) throws -> [UserID] {
        let me = userRecordID.recordName
        var peers = Set(try readMarkerPeers())
        let query = Query(recordType: ChatSchema.directMessageType,
                          predicate: try QueryPredicate(format: "creatorUserRecordID == %@ OR recipient == %@", userRecordID, me),
                          sortDescriptors: [.newestFirst])
        var tried: [String: Int] = [:]
        for record in try container.publicDatabase.records(matching: query, resultsLimit: scan).records {
            guard let creator = record.creatorUserRecordID?.recordName, let to = record[DirectMessage.recipientKey]?.stringValue else { continue }
            let peer = UserID(rawValue: creator == me ? to : creator)
            // A few tries per account, and a bound on accounts, whatever the file holds.
            guard !peers.contains(peer), tried.count < 200 || tried[peer.rawValue] != nil, tried[peer.rawValue, default: 0] < 3 else { continue }
            tried[peer.rawValue, default: 0] += 1
            if directMessage(from: record) != nil { peers.insert(peer) }
        }
        return peers.sorted { $0.rawValue < $1.rawValue }
    }

    /// The accounts whose conversation has a read marker in my private database.
    private func readMarkerPeers() throws -> [UserID] {
        let query = Query(recordType: Self.readMarkerType,
                          predicate: try QueryPredicate(format: "recordID BEGINSWITH %@", Self.conversationMarkerPrefix))
        return try container.privateDatabase.records(matching: query, desiredKeys: [], resultsLimit: 1000).records.map {
            UserID(rawValue: String($0.recordID.recordName.dropFirst(Self.conversationMarkerPrefix.count)))
        }
    }

    /// Direct messages from `peer` to me newer than the conversation's read marker, counted up to `cap`.
    public func unreadCount(conversation peer: UserID, cap: Int = 1000) throws -> Int {
        let since = lastRead(conversation: peer) ?? .distantPast
        let query = Query(recordType: ChatSchema.directMessageType,
                          predicate: try QueryPredicate(format: "creatorUserRecordID == %@ AND recipient == %@ AND creationDate > %@",
                                                        peer.recordID, userRecordID.recordName, since),
                          sortDescriptors: [.newestFirst])
        return try container.publicDatabase.records(matching: query, desiredKeys: [], resultsLimit: cap).records.count
    }

    /// My direct messages to `peer` still in the outbox, in the order they were queued, as they will read once sent.
    public func outgoingDirectMessages(with peer: UserID) throws -> [(message: DirectMessage, failed: Bool)] {
        try outgoingDirectMessages().filter { $0.message.to == peer }
    }

    /// My direct messages still in the outbox, opened from my own sealed copy, with their records.
    private func outgoingDirectMessages() throws -> [(message: DirectMessage, failed: Bool)] {
        try engine.outboxEntries().compactMap { entry in
            guard entry.operation == .save, let record = entry.record, var message = open(record, creator: userRecordID.recordName) else { return nil }
            // Not signed yet, or signed only as it is saved: it is mine, written here.
            message.verified = true
            if case .failed = entry.state { return (message, true) }
            return (message, false)
        }
    }

    /// Deletes a direct message I sent, by its short ID (4+ hex characters), or `last`, my newest to `peer`.
    /// One still in the outbox is replaced there by the delete, as a channel message's is.
    public func deleteDirectMessage(_ reference: String, with peer: UserID? = nil) throws {
        let lowered = reference.lowercased()
        let isLast = lowered == "last" && peer != nil
        guard isLast || (lowered.count >= 4 && lowered.allSatisfy(\.isHexDigit)) else {
            throw CommandError("'\(reference)' is not a message reference. \(CommandGrammar.messageReferenceHelp)")
        }
        let pending = try outgoingDirectMessages().reversed().first {
            !$0.failed && (isLast ? $0.message.to == peer : $0.message.id.rawValue.hasPrefix(lowered))
        }
        if let pending {
            try engine.send(deleting: [pending.message.id.recordID])
            return
        }
        let query: Query
        if isLast, let peer {
            query = Query(recordType: ChatSchema.directMessageType,
                          predicate: try QueryPredicate(format: "creatorUserRecordID == %@ AND recipient == %@", userRecordID, peer.rawValue),
                          sortDescriptors: [.newestFirst])
        } else {
            query = Query(recordType: ChatSchema.directMessageType,
                          predicate: try QueryPredicate(format: "creatorUserRecordID == %@ AND recordID BEGINSWITH %@", userRecordID, lowered))
        }
        let found = try container.publicDatabase.records(matching: query, resultsLimit: 2).records
        guard let record = found.first else {
            throw CommandError(isLast ? "You have sent no direct message to \(peer?.rawValue ?? "them") yet." : "You sent no direct message with the ID \(reference).")
        }
        guard isLast || found.count == 1 else { throw CommandError("Several messages start with \(reference); type more of the ID.") }
        try engine.send(deleting: [record.recordID])
    }
}
