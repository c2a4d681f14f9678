import Foundation
import GRDB
import ProcessTestKit
import Synchronization
import Testing
@testable import RecordStore

@Suite struct ContainerTests {
    @Test func aContainerHoldsThePublicDatabaseAndAssets() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        for name in ["public.sqlite", "assets", "container.json"] {
            #expect(FileManager.default.fileExists(atPath: container.url.appendingPathComponent(name).path), "\(name)")
        }
        #expect(container.mode == .local)
        let again = try dir.container()
        #expect(again.identifier == container.identifier)
    }

    @Test func thePrivateDatabaseIsTheUsersAloneInXDGDataHome() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let privateDir = dir.path("private-data").appendingPathComponent(container.identifier)
        let file = privateDir.appendingPathComponent("private.sqlite")
        let fileMode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        let dirMode = try FileManager.default.attributesOfItem(atPath: privateDir.path)[.posixPermissions] as? Int
        #expect(fileMode == 0o600)
        #expect(dirMode == 0o700)

        let note = try container.privateDatabase.save(Record(recordType: "Note"))
        #expect((try? container.publicDatabase.record(for: note.recordID)) == nil)
    }

    @Test func theDefaultPrivateLocationFollowsXDGDataHome() {
        let user = UserIdentity.current
        if let xdg = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            #expect(user.dataHome.path == xdg)
        } else {
            #expect(user.dataHome.path == user.homeDirectory + "/.local/share")
        }
        #expect(Container.defaultURL(naming: .init(dataDirectoryName: "fatchat")).lastPathComponent == "fatchat")
    }

    @Test func theCurrentUserComesFromTheOSAccount() throws {
        let dir = try TemporaryDirectory()
        let first = try dir.container().currentUserRecordID
        let second = try dir.container().currentUserRecordID
        #expect(first == second)
        #expect(first.recordName == "_\(getuid())_\(try #require(OSUsers.account(getuid())).name)")
    }

    @Test func theCurrentAccountReadsTheSameOnManyThreadsAtOnce() throws {
        let entry = try #require(OSUsers.account(getuid()))
        let expected = UserIdentity(uid: getuid(), userName: entry.name, homeDirectory: entry.home)
        let seen = Mutex<[UserIdentity: Int]>([:])
        DispatchQueue.concurrentPerform(iterations: 200) { _ in
            let identity = UserIdentity.current
            seen.withLock { $0[identity, default: 0] += 1 }
        }
        #expect(seen.withLock { $0 } == [expected: 200])
    }

    @Test func aLocalDirectoryIsDetectedAsLocal() throws {
        let dir = try TemporaryDirectory()
        #expect(JournalMode.detect(for: dir.url) == .local)
        #expect(JournalMode.networkFilesystemMagics.contains(0x6573_5546))
    }

    @Test func eachModeUsesItsJournal() throws {
        let dir = try TemporaryDirectory()
        let local = try dir.container("local", mode: .local)
        let network = try dir.container("network", mode: .network)
        try local.publicDatabase.save(Record(recordType: "Note"))
        try network.publicDatabase.save(Record(recordType: "Note"))
        let localMode = try DatabaseQueue(path: local.url.appendingPathComponent("public.sqlite").path).read {
            try String.fetchOne($0, sql: "PRAGMA journal_mode")
        }
        #expect(localMode == "wal")
        #expect(FileManager.default.fileExists(atPath: network.url.appendingPathComponent("public.sqlite-wal").path) == false)
        #expect(network.mode == .network)
        #expect(try network.publicDatabase.fetchChanges(since: nil).changedRecords.count == 1)
    }

    @Test func aClientThatWouldMixModesRefuses() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.container(mode: .network)
        let error = #expect(throws: StoreError.self) { try dir.container(mode: .local) }
        #expect(error?.code == .badContainer)
        #expect(error?.message.contains("network") == true)
    }

    @Test func aNewerFormatIsIncompatibleAndLeftAlone() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        try container.publicDatabase.save(Record(recordType: "Note"))
        let path = container.url.appendingPathComponent("public.sqlite").path
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')")
        }
        // Fold the WAL in and close everything, as a quiet container is between runs:
        // opening it must not even rewrite the header's counters.
        try DatabaseQueue(path: path).writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for _ in 0..<2 {
            let error = #expect(throws: StoreError.self) { try dir.container() }
            #expect(error?.code == .incompatibleVersion)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func anOlderFileGetsPartialFieldIndexesOnOpen() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let db = container.publicDatabase
        try db.setIndexes(.queryable, forField: "channel", ofType: "Message")
        for i in 0..<20 {
            var message = Record(recordType: "Message", recordID: RecordID(recordName: "m\(i)"))
            message["channel"] = .string(i.isMultiple(of: 2) ? "even" : "odd")
            try db.save(message)
            try db.save(Record(recordType: "Note", recordID: RecordID(recordName: "n\(i)")))
        }
        // Put the file back as the previous format left it: an index over every record, and no v3.
        let path = container.url.appendingPathComponent("public.sqlite").path
        let index = "\"record_q:Message:channel\""
        func indexSQL() throws -> String? {
            try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "SELECT sql FROM sqlite_master WHERE name = 'record_q:Message:channel'") }
        }
        #expect(try indexSQL()?.hasSuffix("WHERE type = 'Message'") == true)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "DROP INDEX \(index)")
            try db.execute(sql: "CREATE INDEX \(index) ON record (type, json_extract(fields, '$.channel.v'), created)")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v3-partial-field-indexes'")
        }
        #expect(try indexSQL()?.contains("WHERE") == false)

        let reopened = try dir.container()
        #expect(try indexSQL()?.hasSuffix("WHERE type = 'Message'") == true)
        let even = Query(recordType: "Message", predicate: try QueryPredicate(format: "channel == 'even'"))
        #expect(try reopened.publicDatabase.countRecords(matching: even) == 10)
        #expect(try reopened.publicDatabase.indexes(ofType: "Message") == ["channel": .queryable])
    }

    @Test(arguments: [JournalMode.local, .network])
    func aCorruptFileIsABadDatabaseAndNeverOverwritten(mode: JournalMode) throws {
        let dir = try TemporaryDirectory()
        _ = try dir.container(mode: mode)
        let path = dir.path("container/public.sqlite").path
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try FileManager.default.removeItem(atPath: path)
        try? FileManager.default.removeItem(atPath: path + "-wal")
        try? FileManager.default.removeItem(atPath: path + "-shm")
        try garbage.write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: StoreError.self) { try dir.container(mode: mode) }
        #expect(error?.code == .badDatabase)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test func aForeignSQLiteFileIsABadDatabase() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.container()
        let path = dir.path("container/public.sqlite").path
        try FileManager.default.removeItem(atPath: path)
        try DatabaseQueue(path: path).write { try $0.execute(sql: "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)") }
        let options = Container.Options(privateDataDirectory: dir.path("private-data"), naming: ContainerNamingTests.fatchat)
        let error = #expect(throws: StoreError.self) { try Container(url: dir.path("container"), options: options) }
        #expect(error?.code == .badDatabase)
        #expect(error?.message.contains("not a Fatchat") == true)
        let tables = try DatabaseQueue(path: path).read { try String.fetchAll($0, sql: "SELECT name FROM sqlite_master") }
        #expect(tables == ["invoices"])
    }

    @Test func aDamagedDescriptorIsABadContainer() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.container()
        try Data("{not json".utf8).write(to: dir.path("container/container.json"))
        #expect((#expect(throws: StoreError.self) { try dir.container() })?.code == .badContainer)
        try Data().write(to: dir.path("file-not-dir"))
        let options = Container.Options(privateDataDirectory: dir.path("p"))
        #expect((#expect(throws: StoreError.self) { try Container(url: dir.path("file-not-dir"), options: options) })?.code == .badContainer)
    }

    @Test(arguments: [JournalMode.local, .network])
    func aVanishedPublicFileIsUnavailableAndNotRecreated(mode: JournalMode) throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(mode: mode)
        let db = container.publicDatabase
        try db.save(Record(recordType: "Note"))
        let path = container.url.appendingPathComponent("public.sqlite").path
        try FileManager.default.moveItem(atPath: path, toPath: path + ".away")
        let error = #expect(throws: StoreError.self) { try db.save(Record(recordType: "Note")) }
        #expect(error?.code == .serviceUnavailable)
        #expect(error?.isTransient == true)
        #expect(!FileManager.default.fileExists(atPath: path))
        try FileManager.default.moveItem(atPath: path + ".away", toPath: path)
        try db.save(Record(recordType: "Note"))
        #expect(try db.fetchChanges(since: nil).changedRecords.count == 2)
    }
}
