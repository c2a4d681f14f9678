import Foundation
import RecordStore

/// One emoji on one message, with the accounts that reacted with it.
public struct ReactionCount: Hashable, Sendable {
    /// The reaction as stored: one grapheme cluster or a short token; sanitize it to show it.
    public var emoji: String
    /// The accounts that reacted with it, each once, in the order they reacted.
    public var users: [UserID]
    /// The handle each of ``users`` had when reacting.
    public var handles: [String]

    /// How many accounts reacted with it.
    public var count: Int { users.count }
}

/// A reaction's record: named after its message, its emoji and its creator's account, so that
/// saving it again changes nothing and each account has at most one of each emoji per message.
///
/// It refers to its message with `deleteSelf`, so deleting the message deletes its reactions,
/// and only its creator may delete it, as with every record. A reader counts a record only when
/// its name is the one its own creator, message and emoji give: a record someone saved under
/// another account's name counts for nobody.
enum Reaction {
    /// The longest reaction, in UTF-8 bytes.
    static let maximumBytes = 32

    /// What a person reads when a reaction is refused.
    static let rules = "A reaction is one emoji (or other single character), or a word of 1 to 16 letters, digits, '_', '+' or '-', like +1."

    /// Checks a reaction as typed: one visible grapheme cluster, or a short token.
    static func check(_ raw: String) throws(CommandError) -> String {
        let text = raw.trimmingCharacters(in: .whitespaces)
        guard isValid(text) else { throw CommandError("'\(Sanitizer.inert(raw))' is not a reaction. \(rules)") }
        return text
    }

    static func isValid(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= maximumBytes else { return false }
        let scalars = text.unicodeScalars
        let token = (1...16).contains(scalars.count) && scalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_+-".unicodeScalars.contains($0))
        }
        if token { return true }
        guard text.count == 1, let first = scalars.first, !first.isASCII else { return false }
        return scalars.allSatisfy { !$0.properties.isWhitespace && $0.properties.generalCategory != .control
            && $0.properties.generalCategory != .format || $0 == "\u{200D}" }
    }

    /// The record of `account`'s `emoji` on `message`: `reaction.<message>.<emoji as hex>.<account>`.
    static func recordID(message: MessageID, emoji: String, account: String) -> RecordID {
        let hex = emoji.utf8.map { String(format: "%02x", $0) }.joined()
        return RecordID(recordName: "reaction.\(message.rawValue).\(hex).\(account)")
    }

    /// The message a reaction's record name says it is on, for a deletion, where only the name is left.
    static func message(inName name: String) -> MessageID? {
        guard name.hasPrefix("reaction.") else { return nil }
        let rest = name.dropFirst("reaction.".count)
        guard let dot = rest.firstIndex(of: "."), dot > rest.startIndex else { return nil }
        return MessageID(rawValue: String(rest[..<dot]))
    }

    /// A stored reaction as (message, emoji, account, handle), if it is well formed and named as its creator would name it.
    static func read(_ record: Record) -> (message: MessageID, emoji: String, user: UserID, handle: String)? {
        guard record.recordType == ChatSchema.reactionType,
              let message = record["message"]?.referenceValue.map({ MessageID($0.recordID) }),
              let emoji = record["emoji"]?.stringValue, isValid(emoji),
              let creator = record.creatorUserRecordID?.recordName,
              record.recordID == recordID(message: message, emoji: emoji, account: creator) else { return nil }
        return (message, emoji, UserID(rawValue: creator), record["handle"]?.stringValue ?? creator)
    }
}

extension ChatClient {
    /// Adds my reaction to a message (MESSAGE as `/edit` takes it); adding it again changes nothing.
    public func react(to reference: String, with raw: String, in name: ChannelName?) throws {
        let emoji = try Reaction.check(raw)
        let message = try resolveMessage(reference, in: name)
        guard !message.id.rawValue.contains(".") else { throw CommandError("Message \(message.shortID) cannot take reactions.") }
        let id = Reaction.recordID(message: message.id, emoji: emoji, account: userRecordID.recordName)
        var record = Record(recordType: ChatSchema.reactionType, recordID: id)
        record["message"] = .reference(Reference(recordID: message.id.recordID, action: .deleteSelf))
        record["emoji"] = .string(emoji)
        record["handle"] = .string(handle)
        try engine.send(saving: [record], savePolicy: .allKeys)
    }

    /// Takes my reaction off a message; taking off one I never made is no error.
    public func unreact(to reference: String, with raw: String, in name: ChannelName?) throws {
        let emoji = try Reaction.check(raw)
        let message = try resolveMessage(reference, in: name)
        try engine.send(deleting: [Reaction.recordID(message: message.id, emoji: emoji, account: userRecordID.recordName)])
    }

    /// The reactions on each of `messages` that has any, each emoji with who reacted, in the order first reacted.
    public func reactions(to messages: [MessageID]) throws -> [MessageID: [ReactionCount]] {
        var result: [MessageID: [ReactionCount]] = [:]
        // A few hundred IDs per query keep the statement small; a page of history is 50.
        for start in stride(from: 0, to: messages.count, by: 200) {
            let ids = messages[start..<min(messages.count, start + 200)].map(\.recordID)
            let query = Query(recordType: ChatSchema.reactionType, predicate: try QueryPredicate(format: "message IN %@", ids),
                              sortDescriptors: [try QuerySortDescriptor(key: "creationDate")])
            let records = try container.publicDatabase.records(matching: query, resultsLimit: 5000).records
            for (message, emoji, user, handle) in records.compactMap(Reaction.read) {
                var counts = result[message] ?? []
                if let index = counts.firstIndex(where: { $0.emoji == emoji }) {
                    guard !counts[index].users.contains(user) else { continue }
                    counts[index].users.append(user)
                    counts[index].handles.append(handle)
                } else {
                    counts.append(ReactionCount(emoji: emoji, users: [user], handles: [handle]))
                }
                result[message] = counts
            }
        }
        return result
    }

    /// A message and its reactions, for `/reactions MESSAGE`.
    public func reactions(of reference: String, in name: ChannelName?) throws -> (Message, [ReactionCount]) {
        let message = try resolveMessage(reference, in: name)
        return (message, try reactions(to: [message.id])[message.id] ?? [])
    }
}
