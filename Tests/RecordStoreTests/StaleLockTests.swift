import Foundation
import GRDB
import Testing
@testable import RecordStore

/// Network mode's patience: the dotfile lock a killed writer left behind, broken by watching it
/// with `lstat` alone, and a file that reads malformed for a moment (a FUSE cache's stale view).
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

    /// Zeroes page 1 after the file header, where the schema's b-tree starts, so that any
    /// statement fails with "malformed"; returns the bytes it overwrote.
    private func damageSchemaPage(_ path: String) throws -> (offset: UInt64, bytes: Data) {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let header = try #require(try handle.read(upToCount: 100))
        let stored = Int(header[16]) << 8 | Int(header[17])
        let pageSize = stored == 1 ? 65_536 : stored
        let bytes = try #require(try handle.read(upToCount: pageSize - 100))
        try handle.seek(toOffset: 100)
        try handle.write(contentsOf: Data(count: bytes.count))
        return (100, bytes)
    }

    @Test func aFileThatReadsMalformedForAMomentIsReadAgainNotGivenUp() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(mode: .network)
        let path = container.url.appendingPathComponent("public.sqlite").path
        let connections = try NetworkConnections(settings: SQLiteSettings(path: path, naming: ContainerNaming()))
        let damaged = try damageSchemaPage(path)
        // The sound bytes come back half a second later, as a FUSE cache's view would.
        let restored = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) {
            if let handle = try? FileHandle(forUpdating: URL(fileURLWithPath: path)) {
                try? handle.seek(toOffset: damaged.offset)
                try? handle.write(contentsOf: damaged.bytes)
                try? handle.close()
            }
            restored.signal()
        }
        let count = try connections.write { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM record") ?? -1 }
        restored.wait()
        #expect(count == 0)
    }

    @Test func aFileThatStaysMalformedIsReportedOnceThePatienceRunsOut() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(mode: .network)
        let path = container.url.appendingPathComponent("public.sqlite").path
        let connections = try NetworkConnections(settings: SQLiteSettings(path: path, naming: ContainerNaming()))
        _ = try damageSchemaPage(path)
        let began = Date()
        let error = #expect(throws: StoreError.self) {
            try connections.write { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM record") }
        }
        let waited = Date().timeIntervalSince(began)
        #expect(error?.code == .badDatabase)
        // Roomy above for a loaded machine: without the patience limit "malformed" would be retried
        // like a busy lock, until the 120 s busy deadline.
        #expect(waited >= NetworkConnections.staleViewPatience && waited < NetworkConnections.staleViewPatience + 30)
    }
}
