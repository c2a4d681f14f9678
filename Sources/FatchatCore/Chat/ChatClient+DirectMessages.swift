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
    /// one account that goes by it as a handle among those who published a key.
    func resolveAccount(_ name: String) throws -> UserID {
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
        guard record.recordType == ChatSchema.directMessageType, let keys = container.accountKeys,
              let creator = record.creatorUserRecordID?.recordName,
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

    /// The newest `limit` direct messages between me and `peer`, oldest first; `before` pages back.
    public func directMessages(with peer: String, limit: Int = 50, before: Date? = nil) throws -> (peer: UserID, messages: [DirectMessage]) {
        let other = try resolveAccount(peer)
        var format = "((creatorUserRecordID == %@ AND recipient == %@) OR (creatorUserRecordID == %@ AND recipient == %@))"
        var arguments: [any PredicateArgument] = [userRecordID, other.rawValue, other.recordID, userRecordID.recordName]
        if let before {
            format += " AND creationDate < %@"
            arguments.append(before)
        }
        let query = Query(recordType: ChatSchema.directMessageType, predicate: try QueryPredicate(format: format, argumentArray: arguments),
                          sortDescriptors: [.newestFirst])
        let records = try container.publicDatabase.records(matching: query, resultsLimit: limit).records
        return (other, records.compactMap(directMessage(from:)).reversed())
    }

    /// Deletes a direct message I sent, by its short ID (4+ hex characters).
    public func deleteDirectMessage(_ reference: String) throws {
        let lowered = reference.lowercased()
        guard lowered.count >= 4, lowered.allSatisfy(\.isHexDigit) else {
            throw CommandError("'\(reference)' is not a message reference. \(CommandGrammar.messageReferenceHelp)")
        }
        let query = Query(recordType: ChatSchema.directMessageType,
                          predicate: try QueryPredicate(format: "creatorUserRecordID == %@ AND recordID BEGINSWITH %@", userRecordID, lowered))
        let found = try container.publicDatabase.records(matching: query, resultsLimit: 2).records
        guard let record = found.first else { throw CommandError("You sent no direct message with the ID \(reference).") }
        guard found.count == 1 else { throw CommandError("Several messages start with \(reference); type more of the ID.") }
        try engine.send(deleting: [record.recordID])
    }
}
