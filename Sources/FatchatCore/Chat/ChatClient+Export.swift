import Foundation
import RecordStore

extension ChatClient {
    /// Hands the newest `last` messages of a channel to `body`, oldest first, a page at a time.
    ///
    /// Any count works, so a person can export a whole channel: memory holds
    /// one page, never the whole history. A first pass walks back from the
    /// newest message, reading no fields, to find the oldest one wanted; a
    /// second reads forward from it. Ties in creation date are ordered by row
    /// in both directions, so the second pass starts exactly at that message.
    public func eachMessage(in name: ChannelName, last: Int, pageSize: Int = 1000, _ body: (Message) throws -> Void) throws {
        guard last > 0 else { return }
        let database = container.publicDatabase
        let limit = max(1, min(pageSize, 10_000))
        let inChannel = try QueryPredicate(format: "channel == %@", name.recordID)

        var first: Record?
        var seen = 0
        var page = try database.records(matching: Query(recordType: ChatSchema.messageType, predicate: inChannel, sortDescriptors: [.newestFirst]),
                                        desiredKeys: [], resultsLimit: min(limit, last))
        while true {
            seen += page.records.count
            first = page.records.last ?? first
            guard seen < last, let cursor = page.cursor else { break }
            page = try database.records(continuing: cursor, desiredKeys: [], resultsLimit: min(limit, last - seen))
        }
        guard let first, let since = first.creationDate else { return }

        // From a millisecond before the first wanted message, skipping up to it: dates
        // round-trip through a Double, so an exact bound could miss that message itself.
        let forward = Query(recordType: ChatSchema.messageType,
                            predicate: try QueryPredicate(format: "channel == %@ AND creationDate >= %@", name.recordID, since.addingTimeInterval(-0.001)),
                            sortDescriptors: [try QuerySortDescriptor(key: "creationDate")])
        var reached = false
        var forwardPage = try database.records(matching: forward, resultsLimit: limit)
        while true {
            for record in forwardPage.records {
                // Past the first wanted message's date without meeting it: it was deleted meanwhile.
                if !reached, record.recordID == first.recordID || (record.creationDate ?? since) > since.addingTimeInterval(0.001) { reached = true }
                guard reached, let message = message(from: record) else { continue }
                try body(message)
            }
            guard let next = forwardPage.cursor else { break }
            forwardPage = try database.records(continuing: next, resultsLimit: limit)
        }
    }
}
