import Foundation
import class GRDB.DatabaseQueue
import Testing
@testable import RecordStore

@Suite struct ChangeFeedTests {
    @Test(arguments: TestEngine.available) func changesSinceATokenAreReportedOnceEachInTheirLatestState(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let before = try db.save(Record(recordType: "Note"))
        let token = try db.currentChangeToken()

        var a = try db.save(Record(recordType: "Note"))
        a["text"] = "edited"
        a = try db.save(a)
        let b = try db.save(Record(recordType: "Note"))
        try db.deleteRecord(withID: b.recordID)
        try db.deleteRecord(withID: before.recordID)

        let batch = try db.fetchChanges(since: token)
        #expect(batch.changedRecords.map(\.recordID) == [a.recordID])
        #expect(batch.changedRecords.first?["text"] == "edited")
        #expect(Set(batch.deletedRecords.map(\.recordID)) == [b.recordID, before.recordID])
        #expect(batch.changes.map(\.kind) == [.created, .updated, .created, .deleted, .deleted])
        #expect(batch.changes[1].previousFields?["text"] == nil)
        #expect(!batch.moreComing)

        let nothing = try db.fetchChanges(since: batch.token)
        #expect(nothing.changes.isEmpty)
        #expect(nothing.token == batch.token)
    }

    /// A feed read for some record types carries the previous fields of their updates only; deletions
    /// carry them always, and a read that names no types carries them for every type.
    @Test(arguments: TestEngine.available) func previousFieldsComeOnlyForTheTypesAskedFor(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        func record(_ type: String, _ key: String, _ value: String) -> Record {
            var record = Record(recordType: type)
            record[key] = .string(value)
            return record
        }
        var note = try db.save(record("Note", "text", "first"))
        var beat = try db.save(record("Presence", "state", "online"))
        let gone = try db.save(record("Presence", "state", "away"))
        let token = try db.currentChangeToken()
        note["text"] = .string("second")
        note = try db.save(note)
        beat["state"] = .string("online again")
        beat = try db.save(beat)
        try db.deleteRecord(withID: gone.recordID)

        func previous(_ batch: ChangeBatch) -> [String?] {
            batch.changes.map { change in
                guard let fields = change.previousFields else { return nil }
                return (fields["text"] ?? fields["state"])?.stringValue
            }
        }
        #expect(previous(try db.fetchChanges(since: token)) == ["first", "online", "away"])
        #expect(previous(try db.fetchChanges(since: token, previousFieldsOf: ["Note"])) == ["first", nil, "away"])
        let none = try db.fetchChanges(since: token, previousFieldsOf: [])
        #expect(previous(none) == [nil, nil, "away"])
        #expect(none.changedRecords.map(\.recordID) == [note.recordID, beat.recordID], "the records themselves still come")
    }

    @Test(arguments: TestEngine.available) func typesPassedOverAreLeftOutAndTheTokenMovesPastThem(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let token = try db.currentChangeToken()
        var beat = Record(recordType: "Presence", recordID: RecordID(recordName: "presence.ada"))
        beat["state"] = .string("online")
        beat = try db.save(beat)
        let first = try db.save(Record(recordType: "Note"))
        beat["state"] = .string("away")
        beat = try db.save(beat)
        let second = try db.save(Record(recordType: "Note"))
        beat["state"] = .string("online")
        beat = try db.save(beat)

        let passed = try db.fetchChanges(since: token, passingOver: ["Presence"])
        #expect(passed.changes.map(\.recordID) == [first.recordID, second.recordID])
        #expect(passed.changedRecords.map(\.recordID) == [first.recordID, second.recordID])
        #expect(try db.fetchChanges(since: passed.token).changes.isEmpty, "the token is past the presence changes too")
        // Asked for in pieces, the batches still come to the end, and hold the same changes.
        var pieces: [RecordID] = []
        var position = token
        for _ in 0..<10 {
            let piece = try db.fetchChanges(since: position, limit: 1, passingOver: ["Presence"])
            pieces += piece.changes.map(\.recordID)
            position = piece.token
            if !piece.moreComing { break }
        }
        #expect(pieces == [first.recordID, second.recordID])
        #expect(try db.fetchChanges(since: position).changes.isEmpty)
        // Not passed over, the presence is there too.
        let all = try db.fetchChanges(since: token).changes
        #expect(all.contains { $0.recordID == beat.recordID })
        #expect(all.filter { $0.recordType != "Presence" }.map(\.recordID) == passed.changes.map(\.recordID))
        #expect(try db.fetchChanges(since: token, passingOver: ["Other"]).changes.map(\.recordID) == all.map(\.recordID))
    }

    @Test(arguments: TestEngine.available) func largeBatchesComeInPiecesWithMoreComing(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let records = (0..<250).map { i -> Record in
            var r = Record(recordType: "Note", recordID: RecordID(recordName: "n\(i)"))
            r["i"] = .int64(Int64(i))
            return r
        }
        try db.modifyRecords(saving: records, deleting: []).check()

        var token: ChangeToken?
        var seen: [RecordID] = []
        var rounds = 0
        repeat {
            let batch = try db.fetchChanges(since: token, limit: 100)
            seen += batch.changedRecords.map(\.recordID)
            token = batch.token
            rounds += 1
            if !batch.moreComing { break }
        } while rounds < 10
        #expect(rounds == 3)
        #expect(seen.count == 250)
        #expect(Set(seen) == Set(records.map(\.recordID)))
    }

    @Test(arguments: TestEngine.available) func aTokenWorksAfterTheProcessReopensTheContainer(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        var data: Data
        do {
            let container = try dir.container(engine: engine)
            try container.publicDatabase.save(Record(recordType: "Note"))
            data = try container.publicDatabase.currentChangeToken().data
        }
        let reopened = try dir.container(engine: engine)
        let later = try reopened.publicDatabase.save(Record(recordType: "Note"))
        let batch = try reopened.publicDatabase.fetchChanges(since: try ChangeToken(data: data))
        #expect(batch.changedRecords.map(\.recordID) == [later.recordID])
        #expect(throws: StoreError.self) { try ChangeToken(data: Data("garbage".utf8)) }
    }

    @Test(arguments: TestEngine.available) func aTokenOlderThanTheKeptHistoryExpires(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine, historyLimit: 10).publicDatabase
        let old = try db.currentChangeToken()
        for _ in 0..<5 { try db.save(Record(recordType: "Note")) }
        #expect(throws: Never.self) { try db.fetchChanges(since: old) }
        for _ in 0..<12 { try db.save(Record(recordType: "Note")) }
        let recent = try db.currentChangeToken()
        for _ in 0..<3 { try db.save(Record(recordType: "Note")) }
        let error = #expect(throws: StoreError.self) { try db.fetchChanges(since: old) }
        #expect(error?.code == .changeTokenExpired)
        #expect(try db.fetchChanges(since: recent).changes.count == 3)
    }

    @Test func aTokenFromAnotherDatabaseExpires() throws {
        let dir = try TemporaryDirectory()
        let one = try dir.container("one").publicDatabase
        let two = try dir.container("two").publicDatabase
        let token = try one.currentChangeToken()
        #expect((#expect(throws: StoreError.self) { try two.fetchChanges(since: token) })?.code == .changeTokenExpired)
    }

    @Test(arguments: TestEngine.available) func zoneFeedsSeeOnlyTheirZone(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).privateDatabase
        let zone = ZoneID(zoneName: "Work")
        try db.saveZone(zone)
        let inZone = try db.save(Record(recordType: "Task", recordID: RecordID(zoneID: zone)))
        try db.save(Record(recordType: "Task"))
        let batch = try db.fetchChanges(in: zone, since: nil)
        #expect(batch.changedRecords.map(\.recordID) == [inZone.recordID])
        #expect(try db.fetchChanges(since: nil).changedRecords.count == 2)
    }

    /// A fetch reads on a connection of its own, kept open between fetches: once another file is moved to the
    /// path, the next fetch must read that file, as every other read does, and not the one opened before.
    @Test func aFetchReadsTheFileThePathNamesNowAfterTheFileIsReplaced() throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(mode: .local).publicDatabase
        let path = dir.path("container/public.sqlite").path
        let one = try db.save(Record(recordType: "Note"))
        let first = try db.fetchChanges(since: nil)
        #expect(first.changedRecords.map(\.recordID) == [one.recordID])

        let copy = dir.path("copy.sqlite").path
        try DatabaseQueue(path: path).inDatabase { try $0.execute(sql: "VACUUM INTO ?", arguments: [copy]) }
        let two = try db.save(Record(recordType: "Note"))
        #expect(try db.fetchChanges(since: first.token).changedRecords.map(\.recordID) == [two.recordID])

        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.moveItem(atPath: path + suffix, toPath: dir.path("old.sqlite\(suffix)").path)
        }
        try FileManager.default.moveItem(atPath: copy, toPath: path)
        let after = try db.fetchChanges(since: first.token)
        #expect(after.changedRecords.isEmpty, "the copy was taken before the second note")
        let three = try db.save(Record(recordType: "Note"))
        #expect(try db.fetchChanges(since: after.token).changedRecords.map(\.recordID) == [three.recordID])
    }
}
