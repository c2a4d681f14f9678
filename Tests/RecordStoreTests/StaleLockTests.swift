import Foundation
import GRDB
import Testing
@testable import RecordStore

/// The dotfile lock a killed writer left behind, broken by watching it with `lstat` alone.
@Suite struct StaleLockTests {
    @Test func aLockThatStaysTheSameIsBrokenAndTheWriteGoesThrough() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(mode: .network)
        let path = container.url.appendingPathComponent("public.sqlite").path
        // What SQLite's unix-dotfile VFS leaves when its process dies holding the lock.
        #expect(mkdir(path + ".lock", 0o777) == 0)
        var settings = SQLiteSettings(path: path, naming: ContainerNaming())
        settings.busyTimeout = 0.2
        settings.busyDeadline = 20
        let connections = try NetworkConnections(settings: settings, staleLockAge: 1)
        let began = Date()
        let count = try connections.write { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM record") ?? -1 }
        #expect(count == 0)
        #expect(Date().timeIntervalSince(began) < 15)
        #expect(access(path + ".lock", F_OK) != 0, "the lock is released after the write")
    }
}
