import Foundation
import RecordStore

/// One page of a channel's history, newest message last.
public struct MessagePage: Sendable {
    public var messages: [Message]
    /// Continues with older messages; `nil` at the start of the channel.
    public var older: HistoryCursor?
}

extension ChatClient {
    /// The newest `limit` messages of a channel, or those before `older`; oldest first.
    public func messages(in name: ChannelName, limit: Int = 50, older cursor: HistoryCursor? = nil) throws -> MessagePage {
        let page: QueryResult
        if let cursor {
            page = try container.publicDatabase.records(continuing: cursor.query, resultsLimit: limit)
        } else {
            page = try container.publicDatabase.records(matching: try messageQuery(name), resultsLimit: limit)
        }
        return MessagePage(messages: page.records.compactMap(message(from:)).reversed(), older: page.cursor.map(HistoryCursor.init))
    }

    /// The oldest `limit` messages of a channel, or those after `newer`; oldest first.
    /// `newer` is `nil` in the result when the page reaches the newest message.
    public func messagesFromStart(in name: ChannelName, limit: Int = 50, newer cursor: HistoryCursor? = nil) throws -> (messages: [Message], newer: HistoryCursor?) {
        let page: QueryResult
        if let cursor {
            page = try container.publicDatabase.records(continuing: cursor.query, resultsLimit: limit)
        } else {
            let query = Query(recordType: ChatSchema.messageType,
                              predicate: try QueryPredicate(format: "channel == %@", name.recordID),
                              sortDescriptors: [try QuerySortDescriptor(key: "creationDate")])
            page = try container.publicDatabase.records(matching: query, resultsLimit: limit)
        }
        return (page.records.compactMap(message(from:)), page.cursor.map(HistoryCursor.init))
    }

    private func messageQuery(_ name: ChannelName) throws -> Query {
        Query(recordType: ChatSchema.messageType,
              predicate: try QueryPredicate(format: "channel == %@", name.recordID),
              sortDescriptors: [.newestFirst])
    }

    // MARK: Read markers

    private func readMarkerID(_ name: ChannelName) -> RecordID { RecordID(recordName: "read.\(name.key)") }

    /// Remembers that everything in a channel up to `date` was read; survives restarts.
    public func markRead(_ name: ChannelName, upTo date: Date) throws {
        var marker = (try? container.privateDatabase.record(for: readMarkerID(name))) ?? Record(recordType: "ReadMarker", recordID: readMarkerID(name))
        if let previous = marker["upTo"]?.dateValue, previous >= date { return }
        marker["upTo"] = .date(date)
        try container.privateDatabase.save(marker, savePolicy: .allKeys)
    }

    /// When the channel was last read, if ever.
    public func lastRead(_ name: ChannelName) -> Date? {
        try? container.privateDatabase.record(for: readMarkerID(name))["upTo"]?.dateValue
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