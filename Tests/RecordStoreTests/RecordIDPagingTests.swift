import Foundation
import GRDB
import ProcessTestKit
import Testing
@testable import RecordStore

/// A zone's record IDs read a page at a time, as the migration reads a container of any size.
@Suite(.startsProcesses)
struct RecordIDPagingTests {
    /// Saves messages `m00`…, in shuffled order, and returns their names.
    fileprivate static func saveMessages(_ count: Int, in container: Container) throws -> [String] {
        let names = (0..<count).map { String(format: "m%02d", $0) }
        for name in names.shuffled() {
            var message = Record(recordType: "Message", recordID: RecordID(recordName: name))
            message["text"] = .string("message \(name)")
            _ = try container.publicDatabase.save(message)
        }
        return names
    }

    /// Every page from the first: each ID once, in the order saved, the page after the last empty.
    private static func walk(_ storage: any RecordStorage, limit: Int) throws -> (ids: [String], pages: Int) {
        try storage.read { reader in
            var names: [String] = []
            var pages = 0
            var row: Int64 = 0
            // At most 100 pages: a bound that did not move would otherwise never end.
            while pages < 100, case let page = try reader.recordIDs(inZone: ZoneID.defaultZoneName, afterRow: row, limit: limit),
                  let last = page.lastRow {
                #expect(page.ids.count <= limit && last > row)
                names += page.ids.map(\.recordName)
                row = last
                pages += 1
            }
            return (names, pages)
        }
    }

    @Test(arguments: TestEngine.available)
    func aZonesIDsComeAPageAtATimeEachOnce(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: engine)
        let saved = try Self.saveMessages(23, in: container)
        let everything = try container.publicDatabase.storage.read { try $0.recordIDs(inZone: ZoneID.defaultZoneName) }.map(\.recordName)
        #expect(Set(saved).isSubset(of: everything) && Set(everything).count == everything.count)

        let (walked, pages) = try Self.walk(container.publicDatabase.storage, limit: 5)
        #expect(walked == everything, "\(walked) against \(everything)")
        #expect(pages == (everything.count + 4) / 5)
        #expect(try container.publicDatabase.storage.read { try $0.recordIDs(inZone: ZoneID.defaultZoneName, afterRow: .max, limit: 5) }.lastRow == nil)
    }

    /// A name planted as a blob, or with a NUL in it, reads back as other text (a bound on names stood still
    /// at it, and the walk never ended); paging by row number ends, each row read once.
    @Test func aPlantedNameCannotHoldThePagingInPlace() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: .sqlite)
        _ = try Self.saveMessages(12, in: container)
        let file = try DatabaseQueue(path: dir.path("container").appendingPathComponent(ContainerDirectory.databaseName).path)
        try file.write { db in
            try db.execute(sql: "UPDATE record SET name = x'6d3035' WHERE name = 'm05'")
            try db.execute(sql: "UPDATE record SET name = 'm07' || char(0) || 'x' WHERE name = 'm07'")
        }
        try file.close()
        let (walked, pages) = try Self.walk(container.publicDatabase.storage, limit: 1)
        #expect(pages < 100, "the walk did not end: \(walked.suffix(5))")
        #expect(walked.filter { $0.hasPrefix("m") }.count == 12 && pages == walked.count, "\(walked)")
    }

    /// A migration reads and sends the records a page at a time, and waits for the server after each:
    /// every record arrives once, whatever the page's size.
    @Test(.enabled(if: PostgresCluster.shouldRun, "\(PostgresCluster.unavailableReason ?? "")"))
    func aMigrationCopiesEveryRecordOncePageByPage() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: .sqlite)
        _ = try Self.saveMessages(23, in: container)
        let before = try container.publicDatabase.storage.read { try $0.recordIDs(inZone: ZoneID.defaultZoneName) }.map(\.recordName)
        let server = try PostgresCluster.shared().makeDatabase()

        var reports: [(done: Int, total: Int)] = []
        let migration = try Container.migrateToPostgres(at: container.url, to: server, naming: ContainerNaming(), recordsPerPage: 4,
                                                        progress: { _ in }, copied: { reports.append(($0, $1)) })
        #expect(migration.records.values.reduce(0, +) == before.count && migration.skipped == 0)
        #expect(reports.last.map { $0.done == before.count && $0.total == before.count } == true, "\(reports)")

        let moved = try Container(url: container.url, options: Container.Options(create: false, privateDataDirectory: dir.path("private-moved")))
        #expect(moved.engine == .postgresql)
        let after = try moved.publicDatabase.storage.read { try $0.recordIDs(inZone: ZoneID.defaultZoneName) }.map(\.recordName)
        #expect(after.count == before.count && Set(after) == Set(before), "before: \(before)\nafter: \(after)")
    }
}

/// `created` planted as blobs in more rows than a page holds: an unsorted query (oldest first) and one newest
/// first both come to an end, each readable record once. The cursor kept a blob as its base64 text, which
/// sorts before every blob, so each page started again at the first of them.
@Suite struct PlantedDatePagingTests {
    @Test(arguments: [[QuerySortDescriptor](), [.newestFirst]])
    func blobDatesCannotHoldTheCursorInPlace(sorts: [QuerySortDescriptor]) throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: .sqlite)
        _ = try RecordIDPagingTests.saveMessages(30, in: container)
        let file = try DatabaseQueue(path: dir.path("container").appendingPathComponent(ContainerDirectory.databaseName).path)
        try file.write { db in
            try db.execute(sql: "UPDATE record SET created = x'00' WHERE name < 'm12'")
            try db.execute(sql: "UPDATE record SET created = x'0001' WHERE name >= 'm12' AND name < 'm15'")
        }
        try file.close()

        let query = Query(recordType: "Message", sortDescriptors: sorts)
        var names: [String] = []
        var page = try container.publicDatabase.records(matching: query, resultsLimit: 5)
        names += page.records.map(\.recordID.recordName)
        var pages = 1
        while let cursor = page.cursor, pages < 100 {
            page = try container.publicDatabase.records(continuing: cursor, resultsLimit: 5)
            names += page.records.map(\.recordID.recordName)
            pages += 1
        }
        #expect(page.cursor == nil, "still paging after \(pages) pages: \(names.suffix(10))")
        #expect(Set(names).count == names.count, "a record came twice: \(names)")
        // The 15 untouched records are readable; those whose date is a blob are skipped as damaged or read, never twice.
        #expect(Set(names).isSuperset(of: (15..<30).map { String(format: "m%02d", $0) }), "\(names)")
    }
}
