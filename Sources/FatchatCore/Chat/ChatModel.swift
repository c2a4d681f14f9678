import Foundation
import RecordStore

/// Record types and field keys of the chat, in the public database.
public enum ChatSchema {
    public static let channelType = "Channel"
    public static let messageType = "Message"
    public static let membershipType = "Membership"
    public static let userType = "User"
    /// A direct message: sealed text for its two parties, and whom it goes to.
    public static let directMessageType = "DirectMessage"
    /// One account's reaction (one emoji) to one message; its record name says which.
    public static let reactionType = "Reaction"

    /// Marks that make the chat's three questions index lookups: newest messages
    /// of a channel, members of a channel, and word search in messages.
    static let indexes: [(type: String, field: String, options: FieldIndexOptions)] = [
        (messageType, "channel", [.queryable]),
        (messageType, "text", [.searchable]),
        (membershipType, "channel", [.queryable]),
        (membershipType, "user", [.queryable]),
        (userType, "handle", [.queryable]),
        (userType, "email", [.queryable]),
        (userType, "discoverable", [.queryable]),
        (directMessageType, DirectMessage.recipientKey, [.queryable]),
        (reactionType, "message", [.queryable]),
    ]
}

/// A channel's name: 1 to 32 letters, digits, `-`, `_` or `.`, starting with a letter or digit.
/// Names are unique ignoring case; the record name is the lowercased name.
public struct ChannelName: Hashable, Sendable, CustomStringConvertible {
    /// The name as its creator typed it, without `#`.
    public let display: String

    /// What a person reads when a name is refused.
    public static let rules = "A channel name has 1 to 32 letters, digits, '-', '_' or '.', and starts with a letter or digit; a leading '#' is ignored."

    public init(_ raw: String) throws(CommandError) {
        let name = raw.hasPrefix("#") ? String(raw.dropFirst()) : raw
        let allowed = name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) }
        guard (1...32).contains(name.count), allowed,
              let first = name.unicodeScalars.first, first.properties.isAlphabetic || ("0"..."9").contains(first) else {
            throw CommandError("'\(raw)' is not a valid channel name. \(Self.rules)")
        }
        display = name
    }

    /// The case-folded key that makes names unique.
    public var key: String { display.lowercased() }

    /// The channel's identity.
    public var id: ChannelID { ChannelID(recordID) }

    /// The channel's record ID in the public database.
    var recordID: RecordID { RecordID(recordName: "channel.\(key)") }

    public var description: String { "#\(display)" }
}

/// A channel, read from its record.
public struct Channel: Hashable, Sendable {
    public var name: ChannelName
    public var topic: String
    public var creator: UserID?
    public var created: Date
    public var id: ChannelID

    var recordID: RecordID { id.recordID }

    init(name: ChannelName, topic: String, creator: UserID?, created: Date, recordID: RecordID) {
        self.name = name
        self.topic = topic
        self.creator = creator
        self.created = created
        self.id = ChannelID(recordID)
    }

    /// The fields of a channel's record that `init(_:)` reads.
    static let fieldKeys = ["name", "topic"]

    init?(_ record: Record) {
        guard record.recordType == ChatSchema.channelType,
              let raw = record["name"]?.stringValue, let name = try? ChannelName(raw) else { return nil }
        self.name = name
        topic = record["topic"]?.stringValue ?? ""
        creator = record.creatorUserRecordID.map(UserID.init)
        created = record.creationDate ?? .distantPast
        id = ChannelID(record.recordID)
    }
}

/// A message, read from its record.
public struct Message: Hashable, Sendable {
    public var id: MessageID
    public var channel: ChannelID
    /// The channel's name when the message was sent.
    public var channelName: String
    public var text: String
    /// The handle the sender had when sending.
    public var handle: String
    /// The sender's OS identity, which no handle can fake.
    public var sender: UserID?
    public var date: Date
    public var edited: Bool
    /// Whether the sender's published key vouches for the message as it is; a line that is
    /// unsigned, or whose signature does not match, is shown as possibly forged.
    public var verified = true
    var attachment: Asset?
    /// The attachment's media type; `nil` when the message has none.
    public var attachmentType: String?
    /// The message this one answers (`/reply`); it may since have been deleted.
    public var replyTo: MessageID?
    /// An action (`/me waves`), shown as `* alice waves`.
    public var isAction = false

    /// Whether a file comes with the message, for `/save`.
    public var hasAttachment: Bool { attachment != nil }

    var recordID: RecordID { id.recordID }

    /// The short ID people type in `/edit`, `/del` and `/save`.
    public var shortID: String { String(id.rawValue.prefix(6)) }

    init?(_ record: Record) {
        guard record.recordType == ChatSchema.messageType,
              let channel = record["channel"]?.referenceValue?.recordID else { return nil }
        id = MessageID(record.recordID)
        self.channel = ChannelID(channel)
        channelName = record["channelName"]?.stringValue ?? String(channel.recordName.dropFirst("channel.".count))
        text = record["text"]?.stringValue ?? ""
        handle = record["handle"]?.stringValue ?? record.creatorUserRecordID?.recordName ?? "?"
        sender = record.creatorUserRecordID.map(UserID.init)
        date = record.creationDate ?? Date()
        edited = record["edited"]?.int64Value == 1
        attachment = record["attachment"]?.assetValue
        attachmentType = record["attachmentType"]?.stringValue
        replyTo = record["replyTo"]?.referenceValue.map { MessageID($0.recordID) }
        isAction = record["action"]?.int64Value == 1
    }

    /// A new message record: the name is chosen here, so a resend is idempotent.
    ///
    /// A reply refers to its parent with action `none`: deleting the parent leaves the reply,
    /// which then shows its parent as deleted.
    static func record(text: String, handle: String, in channel: ChannelName, attachment: Asset? = nil, type: String? = nil,
                       replyTo parent: MessageID? = nil, action: Bool = false) -> Record {
        let name = (0..<4).map { _ in String(format: "%04x", UInt16.random(in: 0...UInt16.max)) }.joined()
        var record = Record(recordType: ChatSchema.messageType, recordID: RecordID(recordName: name))
        record["channel"] = .reference(Reference(recordID: channel.recordID, action: .deleteSelf))
        record["channelName"] = .string(channel.display)
        record["text"] = .string(text)
        record["handle"] = .string(handle)
        if let attachment {
            record["attachment"] = .asset(attachment)
            record["attachmentType"] = .string(type ?? "application/octet-stream")
        }
        if let parent { record["replyTo"] = .reference(Reference(recordID: parent.recordID, action: .none)) }
        if action { record["action"] = 1 }
        return record
    }
}

/// Someone's membership of a channel.
public struct Member: Hashable, Sendable {
    public var user: UserID
    public var handle: String
    public var joined: Date
    /// Their presence, where the caller asked for it (`/who`); `nil` when unknown.
    public var presence: Presence?

    init?(_ record: Record) {
        guard record.recordType == ChatSchema.membershipType, let user = record["user"]?.stringValue else { return nil }
        self.user = UserID(rawValue: user)
        handle = record["handle"]?.stringValue ?? user
        joined = record.creationDate ?? .distantPast
    }

    static func recordID(channel: ChannelName, user: RecordID) -> RecordID {
        RecordID(recordName: "member.\(channel.key).\(user.recordName)")
    }
}
