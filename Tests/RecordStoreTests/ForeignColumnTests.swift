import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore

/// Values of a foreign type, planted with the `sqlite3` CLI in columns that RecordStore used to read with GRDB's trapping subscripts.
///
/// Every column is now read through `StoredColumns` (GRDB's throwing
/// `Row.decode`), so such a value is a skipped row or an error. A trap
/// would end the test process, so reaching the expectations is part of the test.
@Suite struct ForeignColumnTests {
    private func note(_ name: String, at second: Double) -> Record {
        var record = Record(recordType: "Note", recordID: RecordID(recordName: name))
        record["text"] = .string(name)
        record.creationDate = Date(timeIntervalSince1970: 1_700_000_000 + second)
        return record
    }

    /// Every record a query finds, page by page through its cursors.
    private func allPages(_ db: RecordDatabase, _ query: Query, limit: Int) throws -> [String] {
        var page = try db.records(matching: query, resultsLimit: limit)
        var names = page.records.map(\.recordID.recordName)
        var pages = 1
        while let cursor = page.cursor, pages <= 50 {
            page = try db.records(continuing: cursor, resultsLimit: limit)
            names += page.records.map(\.recordID.recordName)
            pages += 1
        }
        return names
    }

    @Test("A sort column holding text, a real or NULL in place of a date: its rows are skipped, and every page of the rest reads")
    func foreignSortValues() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let db = container.publicDatabase
        for i in 0..<8 { try db.save(note("n\(i)", at: Double(i) * 10)) }
        // `created` and `modified` come back both as the sort column (`row[10]` once) and as the record's dates.
        try HostileRowTests.plant(container.url, """
            UPDATE record SET created = 'yesterday' WHERE name = 'n1';
            UPDATE record SET created = 9e999 WHERE name = 'n3';
            UPDATE record SET modified = 'noon' WHERE name = 'n5';
            UPDATE record SET created = x'00ff' WHERE name = 'n7';
            """)
        for limit in [1, 2, 3, 100] {
            let oldestFirst = Query(recordType: "Note", sortDescriptors: [try QuerySortDescriptor(key: "creationDate")])
            #expect(try allPages(db, oldestFirst, limit: limit) == ["n0", "n2", "n4", "n6"], "limit \(limit)")
            #expect(try allPages(db, Query(recordType: "Note", sortDescriptors: [.newestFirst]), limit: limit) == ["n6", "n4", "n2", "n0"],
                    "limit \(limit)")
            let byModification = Query(recordType: "Note", sortDescriptors: [try QuerySortDescriptor(key: "modificationDate")])
            #expect(try allPages(db, byModification, limit: limit) == ["n0", "n2", "n4", "n6"], "limit \(limit)")
        }
        #expect(throws: StoreError.self) { try db.record(for: RecordID(recordName: "n1")) }
        let problems = try db.checkIntegrity()
        for name in ["n1", "n3", "n5", "n7"] {
            #expect(problems.contains { $0.hasPrefix("damaged row: record") && $0.contains(name) }, "\(name): \(problems)")
        }
    }

    @Test("A record type that is a blob, and a field tag that is a number, leave the type summary readable")
    func foreignValuesInTheTypeSummary() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let db = container.publicDatabase
        try db.save(note("good", at: 0))
        try db.save(note("blob-type", at: 1))
        try db.save(note("number-tag", at: 2))
        try HostileRowTests.plant(container.url, """
            UPDATE record SET type = x'00ff' WHERE name = 'blob-type';
            UPDATE record SET type = 'Odd', fields = '{"text":{"t":5,"v":"x"}}' WHERE name = 'number-tag';
            """)
        let summary = try db.recordTypes()
        #expect(summary.map(\.recordType) == ["Note", "Odd"], "the blob type is left out: \(summary)")
        #expect(summary.first { $0.recordType == "Note" }?.count == 1)
        #expect(summary.first { $0.recordType == "Odd" }?.fields == ["text": "?"], "\(summary)")
    }
}
