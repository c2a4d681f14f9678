import Foundation
import Testing
@testable import RecordStore

/// Keyset cursors through 100,000 records: every record once, in order, however deep the page.
struct QueryPagingTests {
    @Test func cursorPagesThroughOneHundredThousandRecords() throws {
        let temp = try TemporaryContainer()
        let db = temp.container.publicDatabase
        let total = 100_000
        let general = RecordID(recordName: "general")
        let random = RecordID(recordName: "random")
        try db.seed([Record(recordType: "Channel", recordID: general), Record(recordType: "Channel", recordID: random)],
                    creator: temp.container.currentUserRecordID)
        var batch: [Record] = []
        for i in 0..<total {
            var m = Record(recordType: "Message", recordID: RecordID(recordName: "m\(i)"))
            m["channel"] = .reference(Reference(recordID: i % 4 == 0 ? random : general))
            m["seq"] = .int64(Int64(i))
            // Ten messages share each second, so the cursor must break ties by row order.
            m.creationDate = Date(timeIntervalSince1970: 1_700_000_000 + Double(i / 10))
            batch.append(m)
            if batch.count == 10_000 {
                try db.bulkInsert(batch, creator: temp.container.currentUserRecordID)
                batch = []
            }
        }
        try db.setIndexes(.queryable, forField: "channel", ofType: "Message")

        // Newest first in one channel: 75,000 records, ties inside each second broken newest-first.
        let query = Query(recordType: "Message", predicate: try QueryPredicate(format: "channel == %@", general),
                          sortDescriptors: [.newestFirst])
        var seen: [Int64] = []
        var page = try db.records(matching: query, desiredKeys: ["seq"], resultsLimit: 1_000)
        var pages = 1
        seen += page.records.compactMap { $0["seq"]?.int64Value }
        while let cursor = page.cursor {
            page = try db.records(continuing: cursor, desiredKeys: ["seq"], resultsLimit: 1_000)
            seen += page.records.compactMap { $0["seq"]?.int64Value }
            pages += 1
        }
        let expected = (0..<Int64(total)).reversed().filter { $0 % 4 != 0 }
        #expect(seen.count == expected.count)
        #expect(seen == expected)
        #expect(pages == 75)

        // Every record of the type, ascending by an unindexed field, in uneven pages (a scan and a sort per page).
        var all: [Int64] = []
        let bySeq = Query(recordType: "Message", sortDescriptors: [try QuerySortDescriptor(key: "seq")])
        page = try db.records(matching: bySeq, desiredKeys: ["seq"], resultsLimit: 9_999)
        all += page.records.compactMap { $0["seq"]?.int64Value }
        while let cursor = page.cursor {
            page = try db.records(continuing: cursor, desiredKeys: ["seq"], resultsLimit: 9_999)
            all += page.records.compactMap { $0["seq"]?.int64Value }
        }
        #expect(all == Array(0..<Int64(total)))
        #expect(Set(all).count == total)
    }
}
