import Foundation
import Testing
@testable import RecordStore

@Suite struct RecordTests {
    @Test func recordIDWithoutNameGetsAUUID() {
        let a = RecordID()
        let b = RecordID()
        #expect(UUID(uuidString: a.recordName) != nil)
        #expect(a != b)
        #expect(a.zoneID == .default)
    }

    // SQLite only: the text holds U+0000, which PostgreSQL's text and jsonb cannot store (the server refuses it, see README).
    @Test(arguments: [TestEngine.sqlite]) func everyFieldTypeSurvivesARoundTrip(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let parent = try db.save(Record(recordType: "Parent"))
        let file = dir.path("blob.bin")
        try Data([1, 2, 3, 250]).write(to: file)

        var record = Record(recordType: "Everything", recordID: RecordID(recordName: "all"))
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        record["text"] = "héllo \"quoted\" \\ \n\t\u{0} 你好 🍕"
        record["count"] = .int64(Int64.max)
        record["negative"] = .int64(Int64.min)
        record["ratio"] = 0.1
        record["bytes"] = .bytes(Data([0, 255, 10]))
        record["when"] = .date(date)
        record["where"] = .location(Location(latitude: 48.85, longitude: 2.35, altitude: 35, horizontalAccuracy: 5))
        record["plain"] = .location(Location(latitude: -33.9, longitude: 151.2))
        record["parent"] = .reference(Reference(parent, action: .deleteSelf))
        record["file"] = .asset(Asset(fileURL: file))
        record["tags"] = ["a", "b"]
        record["numbers"] = [1, 2, 3]
        record["dates"] = .list([.date(date), .date(date.addingTimeInterval(1))])
        record["refs"] = .list([.reference(Reference(parent))])
        record["empty"] = .list([])
        try db.save(record)

        let fetched = try db.record(for: record.recordID)
        for key in ["text", "count", "negative", "ratio", "bytes", "when", "where", "plain", "parent", "tags", "numbers", "dates", "refs", "empty"] {
            #expect(fetched[key] == record[key], "field \(key)")
        }
        let asset = try #require(fetched["file"]?.assetValue)
        #expect(try Data(contentsOf: asset.fileURL) == Data([1, 2, 3, 250]))
        #expect(asset.size == 4)
    }

    @Test(arguments: TestEngine.available) func missingKeyReadsAsNil(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        var record = Record(recordType: "Note")
        record["title"] = "t"
        let saved = try db.save(record)
        #expect(saved["nothing"] == nil)
        #expect(try db.record(for: record.recordID)["nothing"] == nil)
        #expect(saved.allKeys == ["title"])
    }

    @Test(arguments: TestEngine.available) func systemFieldsAreFilledIn(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: engine)
        let db = container.publicDatabase
        let before = Date()
        var record = try db.save(Record(recordType: "Note"))
        #expect(record.creationDate.map { $0 >= before.addingTimeInterval(-1) } == true)
        #expect(record.creatorUserRecordID == container.currentUserRecordID)
        #expect(record.lastModifiedUserRecordID == container.currentUserRecordID)
        let firstTag = try #require(record.recordChangeTag)
        record["x"] = 1
        let updated = try db.save(record)
        #expect(updated.recordChangeTag != firstTag)
        #expect(updated.creationDate == record.creationDate)
        #expect(updated.modificationDate.map { $0 >= record.modificationDate ?? .distantFuture } == true)
    }

    @Test(arguments: TestEngine.available) func aRecordOverOneMegabyteIsRefused(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        var big = Record(recordType: "Blob")
        big["data"] = .bytes(Data(count: Record.maximumSize + 1))
        let error = #expect(throws: StoreError.self) { try db.save(big) }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("1000000") == true)
        #expect(throws: StoreError.self) { try db.record(for: big.recordID) }

        var fits = Record(recordType: "Blob")
        fits["data"] = .bytes(Data(count: Record.maximumSize - 100))
        #expect(throws: Never.self) { try db.save(fits) }
    }

    @Test(arguments: TestEngine.available) func badKeysTypesAndValuesAreRefused(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        var badKey = Record(recordType: "Note")
        badKey["has space"] = "x"
        #expect((#expect(throws: StoreError.self) { try db.save(badKey) })?.code == .invalidArguments)

        var systemKey = Record(recordType: "Note")
        systemKey["creationDate"] = .date(Date())
        #expect((#expect(throws: StoreError.self) { try db.save(systemKey) })?.code == .invalidArguments)

        #expect((#expect(throws: StoreError.self) { try db.save(Record(recordType: "bad type")) })?.code == .invalidArguments)

        var notFinite = Record(recordType: "Note")
        notFinite["x"] = .double(.nan)
        #expect((#expect(throws: StoreError.self) { try db.save(notFinite) })?.code == .invalidArguments)

        var mixed = Record(recordType: "Note")
        mixed["x"] = ["a", 1]
        #expect((#expect(throws: StoreError.self) { try db.save(mixed) })?.code == .invalidArguments)
    }

    @Test(arguments: TestEngine.available) func desiredKeysMakePartialRecords(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        var record = Record(recordType: "Note")
        record["title"] = "t"
        record["body"] = "b"
        try db.save(record)
        let partial = try db.record(for: record.recordID, desiredKeys: ["title"])
        #expect(partial.isPartial)
        #expect(partial["title"] == "t")
        #expect(partial["body"] == nil)

        // Saving a partial record changes only what it loaded, and keeps the rest.
        var edited = partial
        edited["title"] = "new"
        try db.save(edited)
        let full = try db.record(for: record.recordID)
        #expect(full["title"] == "new")
        #expect(full["body"] == "b")
    }
}
