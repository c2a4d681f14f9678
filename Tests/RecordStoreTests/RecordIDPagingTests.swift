import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore

/// A zone's record IDs read a page at a time, as the migration reads a container of any size.
@Suite(.startsProcesses)
struct RecordIDPagingTests {
    /// Saves messages `m00`…, in shuffled order, and returns their names.
    private static func saveMessages(_ count: Int, in container: Container) throws -> [String] {
        let names = (0..<count).map { String(format: "m%02d", $0) }
        for name in names.shuffled() {
            var message = Record(recordType: "Message", recordID: RecordID(recordName: name))
            message["text"] = .string("message \(name)")
            _ = try container.publicDatabase.save(message)
        }
        return names
    }

    /// Every page from the first: each ID once, in name order, the page after the last empty.
    private static func walk(_ storage: any RecordStorage, limit: Int) throws -> (ids: [String], pages: Int) {
        try storage.read { reader in
            var names: [String] = []
            var pages = 0
            // At most 100 pages: a bound that let a name through again would otherwise never end.
            while pages < 100, case let page = try reader.recordIDs(inZone: ZoneID.defaultZoneName, after: names.last, limit: limit), !page.isEmpty {
                #expect(page.count <= limit)
                names += page.map(\.recordName)
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
        #expect(Set(saved).isSubset(of: everything))

        let (walked, pages) = try Self.walk(container.publicDatabase.storage, limit: 5)
        #expect(walked.count == everything.count && Set(walked) == Set(everything), "\(walked) against \(everything)")
        #expect(pages == (everything.count + 4) / 5)
        #expect(walked.filter { $0.hasPrefix("m") } == saved, "the messages in name order: \(walked)")
        // After the last name there is nothing, and a bound between two names starts at the next.
        #expect(try container.publicDatabase.storage.read { try $0.recordIDs(inZone: ZoneID.defaultZoneName, after: "m22", limit: 5) }
                    .filter { $0.recordName.hasPrefix("m") }.isEmpty)
        #expect(try container.publicDatabase.storage.read { try $0.recordIDs(inZone: ZoneID.defaultZoneName, after: "m10x", limit: 2) }
                    .map(\.recordName) == ["m11", "m12"])
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
