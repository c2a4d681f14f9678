import Foundation
import Testing
@testable import RecordStore
@testable import SyncEngine

/// Timer looks spared at database files that have not changed, and never at files that have.
@Suite struct SparedLooksTests {
    /// Sets the database's files' times `seconds` back, as if nothing had written them since.
    private func age(_ database: RecordDatabase, by seconds: Int) throws {
        let storage = try #require(database.storage as? SQLiteStorage)
        for path in [storage.path, storage.path + "-wal"] where FileManager.default.fileExists(atPath: path) {
            let then = Date().addingTimeInterval(-Double(seconds))
            try FileManager.default.setAttributes([.modificationDate: then], ofItemAtPath: path)
        }
    }

    @Test func aStampVouchesForUnchangedFilesOnlyOnceTheyAreSettled() throws {
        let dir = try TemporaryDirectory()
        let mine = try dir.container(user: "me").privateDatabase
        try mine.save(Record(recordType: "Note", recordID: RecordID(recordName: "first")))
        let fresh = try #require(mine.filesStamp())
        #expect(!fresh.isSettled, "just written: a commit in the same clock tick could leave the times as they are")
        try age(mine, by: 5)
        let settled = try #require(mine.filesStamp())
        #expect(settled.isSettled)
        #expect(mine.filesStamp() == settled)

        // Another process of the same user commits: its own connection, its own file handles.
        let other = try dir.container(user: "me").privateDatabase
        try other.save(Record(recordType: "Note", recordID: RecordID(recordName: "left")))
        #expect(mine.filesStamp() != settled, "a commit by anyone changes the stamp")

        // Storage that a stat cannot vouch for has no stamp.
        let network = try TemporaryDirectory()
        #expect(try network.container(user: "me", mode: .network).publicDatabase.filesStamp() == nil)
    }

    @Test func looksAreSparedAtSettledUnchangedFilesAtMostNineInARow() throws {
        let dir = try TemporaryDirectory()
        let database = try dir.container(user: "me").privateDatabase
        try database.save(Record(recordType: "Note", recordID: RecordID(recordName: "a")))
        var looks = SparedLooks()
        looks.reading(database.filesStamp())
        var spared = looks.spares(database.filesStamp())
        #expect(!spared, "the last read was of files just written")

        try age(database, by: 5)
        looks.reading(database.filesStamp())
        for look in 0..<SparedLooks.mostSpared {
            spared = looks.spares(database.filesStamp())
            #expect(spared, "look \(look)")
        }
        spared = looks.spares(database.filesStamp())
        #expect(!spared, "the tenth look reads, whatever the stamp says")

        looks.reading(database.filesStamp())
        try dir.container(user: "me").privateDatabase.save(Record(recordType: "Note", recordID: RecordID(recordName: "b")))
        spared = looks.spares(database.filesStamp())
        #expect(!spared, "never at files that changed")
        spared = looks.spares(nil)
        #expect(!spared, "nor where there is no stamp")
    }

    /// With inotify off, the timer is the fetch loop's only signal: its spared looks still find a commit.
    @Test func anIdleFetchLoopStillFindsACommitNothingWokeItFor() throws {
        let dir = try TemporaryDirectory()
        var configuration = SyncEngine.Configuration.testing(client: "blind")
        configuration.useInotify = false
        let engine = try SyncEngine(container: try dir.container(user: "reader"), configuration: configuration)
        engine.start()
        defer { engine.stop() }
        Thread.sleep(forTimeInterval: 1.5)
        let writer = try dir.container(user: "writer")
        try writer.publicDatabase.save(Record(recordType: "Note", recordID: RecordID(recordName: "unheard")))
        var collector = EventCollector(engine: engine)
        #expect(collector.collect(timeout: 20) { changedNames($0).contains("unheard") })
    }
}
