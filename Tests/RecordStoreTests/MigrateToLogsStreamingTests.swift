import Foundation
import GRDB
import Testing
@testable import RecordStore

/// `migrateToLogs` writes each account's log as it reads the file, a batch of accounts per pass, holding
/// only a little of each log in memory; whatever the batch and the amount held, every record arrives once.
@Suite(.enabled(if: geteuid() == 0, "gives logs to other uids, which only root may"))
struct MigrateToLogsStreamingTests {
    static let accounts = ["_0_root", "_5001_alpha", "_5002_beta"]

    /// Every record's name and creator.
    private static func names(_ container: Container) throws -> [String: String] {
        try container.publicDatabase.storage.read { reader in
            var creators: [String: String] = [:]
            for id in try reader.recordIDs(inZone: ZoneID.defaultZoneName) {
                creators[id.recordName] = try reader.record(id, keys: nil)?.creatorUserRecordID?.recordName ?? "?"
            }
            return creators
        }
    }

    @Test(arguments: [(1, 200), (2, 1 << 16)])
    func everyRecordReachesItsCreatorsLogOnce(accountsPerPass: Int, bytesHeld: Int) throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(mode: .local)
        for k in 0..<30 {
            var message = Record(recordType: "Message", recordID: RecordID(recordName: String(format: "m%02d", k)))
            message["text"] = .string("message \(k), with enough text that a few of them fill more than the bytes held")
            _ = try container.publicDatabase.save(message)
        }
        // Three creators: the rows are rewritten, as a file other users had posted to would hold them.
        let file = try DatabaseQueue(path: dir.path("container").appendingPathComponent(ContainerDirectory.databaseName).path)
        try file.write { db in
            for k in 0..<30 {
                try db.execute(sql: "UPDATE record SET creator = ? WHERE name = ?", arguments: [Self.accounts[k % 3], String(format: "m%02d", k)])
            }
        }
        try file.close()
        let before = try Self.names(container)
        #expect(before.count >= 30)

        var reports: [(account: String, done: Int, total: Int)] = []
        let migration = try Container.migrateToLogs(at: container.url, naming: ContainerNaming(), accountsPerPass: accountsPerPass,
                                                    bytesHeld: bytesHeld, progress: { _ in }, written: { reports.append(($0, $1, $2)) })
        #expect(migration.skipped == 0)
        #expect(migration.records.values.reduce(0, +) == before.count)
        #expect(reports.map(\.account) == Self.accounts, "\(reports)")
        #expect(reports.last.map { $0.done == before.count && $0.total == before.count } == true, "\(reports)")

        var options = Container.Options(create: false, privateDataDirectory: dir.path("private-after"))
        options.mode = .local
        let moved = try Container(url: container.url, options: options)
        #expect(moved.engine == .log)
        _ = try moved.refreshPublicDatabase()
        #expect(try Self.names(moved) == before)

        // Each log is its account's, and nothing half-written is left beside it.
        for account in Self.accounts {
            let folder = dir.path("container").appendingPathComponent("logs").appendingPathComponent(account)
            let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            let logs = files.filter { $0.hasSuffix(".log") }
            #expect(logs.count == 1 && !files.contains { $0.hasPrefix(".") }, "\(account): \(files)")
            var info = stat()
            #expect(lstat(folder.appendingPathComponent(logs.first ?? "").path, &info) == 0)
            #expect(info.st_uid == LogDirectory.uid(inAccount: account))
        }
    }
}
