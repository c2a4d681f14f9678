import Foundation
import Testing
@testable import RecordStore

/// Messages in `channels` channels, `count` in all, created one second apart.
private func seedMessages(_ db: RecordDatabase, count: Int, channels: Int, creator: RecordID) throws -> [RecordID] {
    let channelIDs = (0..<channels).map { RecordID(recordName: "channel\($0)") }
    try db.seed(channelIDs.map { Record(recordType: "Channel", recordID: $0) }, creator: creator)
    let messages = (0..<count).map { i -> Record in
        var m = Record(recordType: "Message", recordID: RecordID(recordName: "m\(i)"))
        m["channel"] = .reference(Reference(recordID: channelIDs[i % channels], action: .deleteSelf))
        m["text"] = .string("message number \(i)")
        m["seq"] = .int64(Int64(i))
        m.creationDate = Date(timeIntervalSince1970: 1_000_000 + Double(i))
        return m
    }
    try db.seed(messages, creator: creator)
    return channelIDs
}

struct QueryTests {
    @Test func newestMessagesOfAChannelUseTheFieldIndex() throws {
        let temp = try TemporaryContainer()
        let db = temp.container.publicDatabase
        let channels = try seedMessages(db, count: 2_000, channels: 10, creator: temp.container.currentUserRecordID)
        let query = Query(recordType: "Message", predicate: try QueryPredicate(format: "channel == %@", channels[3]),
                          sortDescriptors: [.newestFirst])

        let before = try db.queryPlan(query).joined(separator: "\n")
        #expect(!before.contains("record_q:Message:channel"), "no index before the mark: \(before)")
        let scanned = try db.records(matching: query, resultsLimit: 50)

        try db.setIndexes(.queryable, forField: "channel", ofType: "Message")
        let plan = try db.queryPlan(query).joined(separator: "\n")
        #expect(plan.contains("USING INDEX record_q:Message:channel"), "\(plan)")
        #expect(!plan.contains("TEMP B-TREE"), "\(plan)")

        let page = try db.records(matching: query, resultsLimit: 50)
        #expect(page.records.map(\.recordID) == scanned.records.map(\.recordID))
        #expect(page.records.count == 50)
        #expect(page.records.first?.recordID.recordName == "m1993")
        #expect(page.records.allSatisfy { $0["channel"]?.referenceValue?.recordID == channels[3] })
        let cursor = try #require(page.cursor)
        let next = try db.records(continuing: cursor, resultsLimit: 50)
        #expect(next.records.first?.recordID.recordName == "m1493")
        let deeper = try db.queryPlan(query, cursor: cursor).joined(separator: "\n")
        #expect(deeper.contains("USING INDEX record_q:Message:channel (type=? AND <expr>=? AND created<?)"), "a cursor page seeks: \(deeper)")
        #expect(!deeper.contains("TEMP B-TREE"), "\(deeper)")
    }

    @Test func sortableFieldOrdersWithoutTemporaryTree() throws {
        let temp = try TemporaryContainer()
        let db = temp.container.publicDatabase
        _ = try seedMessages(db, count: 200, channels: 2, creator: temp.container.currentUserRecordID)
        try db.setIndexes(.sortable, forField: "seq", ofType: "Message")
        let query = Query(recordType: "Message", sortDescriptors: [try QuerySortDescriptor(key: "seq", ascending: false)])
        let plan = try db.queryPlan(query).joined(separator: "\n")
        #expect(plan.contains("USING INDEX record_s:Message:seq"), "\(plan)")
        #expect(!plan.contains("TEMP B-TREE"), "\(plan)")
        #expect(try db.records(matching: query, resultsLimit: 3).records.map(\.recordID.recordName) == ["m199", "m198", "m197"])
    }

    @Test func searchableMarkIndexesEarlierRecordsAndFollowsSavesAndDeletes() throws {
        let temp = try TemporaryContainer()
        let db = temp.container.publicDatabase
        var a = Record(recordType: "Note", recordID: RecordID(recordName: "a"))
        a["body"] = "Crème brûlée recipe"
        a["title"] = "dessert"
        try db.save(a)
        let query = Query(recordType: "Note", predicate: try QueryPredicate(format: "self CONTAINS 'CREME'"))
        #expect(!(try db.queryPlan(query).joined().contains("record_search")), "no searchable field: a scan")
        #expect(try db.records(matching: query).records.map(\.recordID.recordName) == ["a"])

        try db.setIndexes(.searchable, forField: "body", ofType: "Note")
        #expect(try db.indexes(ofType: "Note") == ["body": .searchable])
        let plan = try db.queryPlan(query).joined(separator: "\n")
        #expect(plan.contains("record_search VIRTUAL TABLE"), "\(plan)")
        #expect(try db.records(matching: query).records.map(\.recordID.recordName) == ["a"])
        let titleQuery = Query(recordType: "Note", predicate: try QueryPredicate(format: "self CONTAINS 'dessert'"))
        #expect(try db.records(matching: titleQuery).records.isEmpty, "title is not searchable")

        var b = Record(recordType: "Note", recordID: RecordID(recordName: "b"))
        b["body"] = "creme fraiche"
        try db.save(b)
        #expect(try db.records(matching: query).records.map(\.recordID.recordName) == ["a", "b"])
        var changed = try db.record(for: a.recordID)
        changed["body"] = "apple pie"
        try db.save(changed)
        try db.deleteRecord(withID: b.recordID)
        #expect(try db.records(matching: query).records.isEmpty)
        let pie = Query(recordType: "Note", predicate: try QueryPredicate(format: "self CONTAINS 'Pie'"))
        #expect(try db.records(matching: pie).records.map(\.recordID.recordName) == ["a"])

        try db.setIndexes([], forField: "body", ofType: "Note")
        #expect(try db.indexes(ofType: "Note").isEmpty)
        #expect(try db.records(matching: titleQuery).records.map(\.recordID.recordName) == ["a"], "back to all string fields")
    }

    @Test(arguments: TestEngine.available) func desiredKeysMakePartialRecords(engine: TestEngine) throws {
        let temp = try TemporaryContainer(engine: engine)
        let db = temp.container.publicDatabase
        _ = try seedMessages(db, count: 5, channels: 1, creator: temp.container.currentUserRecordID)
        let result = try db.records(matching: Query(recordType: "Message"), desiredKeys: ["seq"])
        #expect(result.records.count == 5)
        #expect(result.records.allSatisfy { $0.isPartial && $0.allKeys == ["seq"] && $0.loadedKeys == ["seq"] })
        #expect(result.cursor == nil)
    }

    @Test(arguments: TestEngine.available) func zoneLimitsAQuery(engine: TestEngine) throws {
        let temp = try TemporaryContainer(engine: engine)
        let db = temp.container.privateDatabase
        try db.saveZone(ZoneID(zoneName: "work"))
        for zone in [ZoneID.default, ZoneID(zoneName: "work")] {
            var r = Record(recordType: "Task", recordID: RecordID(recordName: "t", zoneID: zone))
            r["done"] = 0
            try db.save(r)
        }
        #expect(try db.records(matching: Query(recordType: "Task")).records.count == 2)
        let work = try db.records(matching: Query(recordType: "Task"), inZone: ZoneID(zoneName: "work"))
        #expect(work.records.map(\.recordID.zoneID.zoneName) == ["work"])
        let byID = Query(recordType: "Task", predicate: try QueryPredicate(format: "recordID == %@", RecordID(recordName: "t", zoneID: ZoneID(zoneName: "work"))))
        #expect(try db.records(matching: byID).records.map(\.recordID.zoneID.zoneName) == ["work"])
    }

    @Test(arguments: TestEngine.available) func countingMatchesWhatTheQueryReturns(engine: TestEngine) throws {
        let temp = try TemporaryContainer(engine: engine)
        let db = temp.container.publicDatabase
        let channels = try seedMessages(db, count: 300, channels: 3, creator: temp.container.currentUserRecordID)
        try db.setIndexes(.queryable, forField: "channel", ofType: "Message")
        try db.setIndexes(.searchable, forField: "text", ofType: "Message")
        let queries = [
            Query(recordType: "Message"),
            Query(recordType: "Message", predicate: try QueryPredicate(format: "channel == %@", channels[1])),
            Query(recordType: "Message", predicate: try QueryPredicate(format: "channel == %@ AND seq < 100", channels[2])),
            Query(recordType: "Message", predicate: try QueryPredicate(format: "self CONTAINS '7'")),
            Query(recordType: "Channel"),
            Query(recordType: "Nothing"),
        ]
        let counts = try queries.map { try db.countRecords(matching: $0) }
        #expect(counts == [300, 100, 33, try db.records(matching: queries[3], resultsLimit: 1000).records.count, 3, 0])
        #expect(counts[3] > 0)
        #expect((try? db.countRecords(matching: Query(recordType: "bad type"))) == nil)

        let privateDB = temp.container.privateDatabase
        try privateDB.saveZone(ZoneID(zoneName: "work"))
        try privateDB.save(Record(recordType: "Task", recordID: RecordID(recordName: "t", zoneID: ZoneID(zoneName: "work"))))
        try privateDB.save(Record(recordType: "Task", recordID: RecordID(recordName: "t")))
        #expect(try privateDB.countRecords(matching: Query(recordType: "Task")) == 2)
        #expect(try privateDB.countRecords(matching: Query(recordType: "Task"), inZone: ZoneID(zoneName: "work")) == 1)
    }

    @Test(arguments: TestEngine.available) func misuseIsRefusedWithInvalidArguments(engine: TestEngine) throws {
        let temp = try TemporaryContainer(engine: engine)
        let db = temp.container.publicDatabase
        _ = try seedMessages(db, count: 3, channels: 1, creator: temp.container.currentUserRecordID)
        let page = try db.records(matching: Query(recordType: "Message"), resultsLimit: 1)
        let cursor = try #require(page.cursor)
        let error = #expect(throws: StoreError.self) { try db.records(matching: Query(recordType: "Channel"), cursor: cursor) }
        #expect(error?.code == .invalidArguments)
        #expect((try? db.records(matching: Query(recordType: "Message"), resultsLimit: 0)) == nil)
        #expect((try? db.records(matching: Query(recordType: "bad type"))) == nil)
        #expect((try? QuerySortDescriptor(key: "no-such key")) == nil)
        #expect((try? db.setIndexes(.queryable, forField: "creationDate", ofType: "Message")) == nil)
    }
}
