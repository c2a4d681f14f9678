import Foundation
import RecordStore

/// One page of a history (a channel's, or a direct conversation's), newest message last.
public struct HistoryPage<Item: Sendable>: Sendable {
    public var messages: [Item]
    /// Continues with older messages; `nil` at the start of the history.
    public var older: HistoryCursor?
}

/// One page of a channel's history, newest message last.
public typealias MessagePage = HistoryPage<Message>

extension ChatClient {
    /// The newest `limit` messages of a channel, or those before `older`; oldest first.
    public func messages(in name: ChannelName, limit: Int = 50, older cursor: HistoryCursor? = nil) throws -> MessagePage {
        let page = try records(cursor, else: try messageQuery(name), limit: limit)
        return MessagePage(messages: messages(from: page.records).reversed(), older: page.cursor.map(HistoryCursor.init))
    }

    /// The oldest `limit` messages of a channel, or those after `newer`; oldest first.
    /// `newer` is `nil` in the result when the page reaches the newest message.
    public func messagesFromStart(in name: ChannelName, limit: Int = 50, newer cursor: HistoryCursor? = nil) throws -> (messages: [Message], newer: HistoryCursor?) {
        let query = Query(recordType: ChatSchema.messageType,
                          predicate: try QueryPredicate(format: "channel == %@", name.recordID),
                          sortDescriptors: [try QuerySortDescriptor(key: "creationDate")])
        let page = try records(cursor, else: query, limit: limit)
        return (messages(from: page.records), page.cursor.map(HistoryCursor.init))
    }

    /// A page of records of the public database: where `cursor` left off, else the first of `query`.
    func records(_ cursor: HistoryCursor?, else query: @autoclosure () throws -> Query, limit: Int) throws -> QueryResult {
        if let cursor { return try container.publicDatabase.records(continuing: cursor.query, resultsLimit: limit) }
        return try container.publicDatabase.records(matching: try query(), resultsLimit: limit)
    }

    private func messageQuery(_ name: ChannelName) throws -> Query {
        Query(recordType: ChatSchema.messageType,
              predicate: try QueryPredicate(format: "channel == %@", name.recordID),
              sortDescriptors: [.newestFirst])
    }

    // MARK: Read markers

    static let readMarkerType = "ReadMarker"
    /// A direct conversation's marker is named after the other account; no channel name starts with `@`.
    static let conversationMarkerPrefix = "read.@"

    private func readMarkerID(_ name: ChannelName) -> RecordID { RecordID(recordName: "read.\(name.key)") }
    func readMarkerID(conversation peer: UserID) -> RecordID { RecordID(recordName: Self.conversationMarkerPrefix + peer.rawValue) }

    /// Remembers that everything in a channel up to `date` was read; survives restarts.
    public func markRead(_ name: ChannelName, upTo date: Date) throws {
        try markRead(readMarkerID(name), upTo: date)
    }

    /// Remembers that my direct conversation with `peer` was read up to `date`; it also keeps the
    /// conversation in my list, however old it grows.
    public func markRead(conversation peer: UserID, upTo date: Date) throws {
        try markRead(readMarkerID(conversation: peer), upTo: date)
    }

    private func markRead(_ id: RecordID, upTo date: Date) throws {
        var marker = (try? container.privateDatabase.record(for: id)) ?? Record(recordType: Self.readMarkerType, recordID: id)
        if let previous = marker["upTo"]?.dateValue, previous >= date { return }
        marker["upTo"] = .date(date)
        try container.privateDatabase.save(marker, savePolicy: .allKeys)
    }

    /// When the channel was last read, if ever.
    public func lastRead(_ name: ChannelName) -> Date? {
        try? container.privateDatabase.record(for: readMarkerID(name))["upTo"]?.dateValue
    }

    /// When my direct conversation with `peer` was last read, if ever.
    public func lastRead(conversation peer: UserID) -> Date? {
        try? container.privateDatabase.record(for: readMarkerID(conversation: peer))["upTo"]?.dateValue
    }

    /// Messages newer than the read marker, counted up to `cap`.
    public func unreadCount(_ name: ChannelName, cap: Int = 100) throws -> Int {
        let since = lastRead(name) ?? .distantPast
        let query = Query(recordType: ChatSchema.messageType,
                          predicate: try QueryPredicate(format: "channel == %@ AND creationDate > %@ AND creatorUserRecordID != %@", name.recordID, since, userRecordID),
                          sortDescriptors: [.newestFirst])
        return try container.publicDatabase.records(matching: query, desiredKeys: [], resultsLimit: cap).records.count
    }
}