import RecordStore

/// An identity in the chat: the name the shared file keeps a thing under, wrapped so that
/// front ends compare and show it without knowing the store.
///
/// `Kind` only keeps one kind of ID from passing for another: a ``MessageID``
/// is never a ``ChannelID``, though both are names.
public struct ChatID<Kind>: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The name as stored.
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    init(_ id: RecordID) { rawValue = id.recordName }
    var recordID: RecordID { RecordID(recordName: rawValue) }
}

/// The kinds of ``ChatID``; they have no values.
public enum ChatIDKind {
    public enum Message {}
    public enum Channel {}
    public enum User {}
}

/// A message's identity: the name its sending client chose, so that a resend is idempotent;
/// its first characters are the short ID people type.
public typealias MessageID = ChatID<ChatIDKind.Message>

/// A channel's identity while it lives; a channel made again under its name gets it again.
public typealias ChannelID = ChatID<ChatIDKind.Channel>

/// An OS account as the chat knows it (`_1000_ada`), which no handle can fake.
public typealias UserID = ChatID<ChatIDKind.User>

/// Where a page of a channel's history ended, to read the next page from, older or newer.
///
/// It continues the same query, so paging never repeats or skips a message
/// that was there when the first page was read.
public struct HistoryCursor: Hashable, Sendable {
    let query: QueryCursor
}
