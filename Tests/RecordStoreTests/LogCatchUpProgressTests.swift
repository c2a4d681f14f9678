import Foundation
import Testing
@testable import RecordStore

/// A new client's long first poll reports how far it has got; a short one says nothing.
struct LogCatchUpProgressTests {
    func openClient(_ directory: TemporaryDirectory, _ name: String, historyLimit: Int? = nil) throws -> Container {
        var options = Container.Options(privateDataDirectory: directory.path(name))
        options.engine = .log
        if let historyLimit { options.changeHistoryLimit = historyLimit }
        return try Container(url: directory.path("container"), options: options)
    }

    /// A writer whose log holds `count` notes, from `n\(start)` on, that it never applied to its own cache;
    /// `suffix` marks saves made again.
    func writeLog(_ directory: TemporaryDirectory, count: Int, from start: Int = 0, suffix: String = "") throws {
        let writer = try openClient(directory, "writer")
        try writer.appendToOwnLogUnapplied((start..<start + count).map { index in
            var record = Record(recordType: "Note", recordID: RecordID(recordName: "n\(index)"))
            record["text"] = .string("note \(index)" + suffix)
            return record
        })
    }

    @Test("More than the threshold to read: reports that grow, end at every entry, and say so once done")
    func longCatchUpReportsProgress() throws {
        let directory = try TemporaryDirectory()
        let count = CatchUpProgress.threshold + 2_000
        try writeLog(directory, count: count)
        let reader = try openClient(directory, "reader")
        var reports: [CatchUpProgress] = []
        let applied = try reader.refreshPublicDatabase { reports.append($0) }
        #expect(applied == count)
        #expect(reports.count >= 2)
        #expect(reports.first?.isDone == false)
        #expect(reports.first.map { $0.estimatedTotal >= $0.entries && $0.bytesTotal > $0.bytesRead } == true)
        #expect(reports.last == CatchUpProgress(entries: count, bytesRead: reports.last?.bytesTotal ?? -1, bytesTotal: reports.last?.bytesTotal ?? -2, isDone: true))
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.entries < $1.entries && $0.bytesRead < $1.bytesRead })
        #expect(try reader.publicDatabase.countRecords(matching: Query(recordType: "Note")) == count)
    }

    @Test("A record saved again in a later step of one catch-up shows its last save, once, like a record read in one step")
    func recordChangedInALaterStep() throws {
        let directory = try TemporaryDirectory()
        let count = CatchUpProgress.threshold + 2_000
        try writeLog(directory, count: count)
        try writeLog(directory, count: 3, suffix: ", edited")
        let stepped = try openClient(directory, "stepped")
        var reports: [CatchUpProgress] = []
        #expect(try stepped.refreshPublicDatabase { reports.append($0) } == count + 3)
        #expect(reports.count >= 2)
        let whole = try openClient(directory, "whole")
        #expect(try whole.refreshPublicDatabase() == count + 3)
        for reader in [stepped, whole] {
            #expect(try reader.publicDatabase.countRecords(matching: Query(recordType: "Note")) == count)
            for index in 0..<4 {
                let text = try reader.publicDatabase.record(for: RecordID(recordName: "n\(index)"))["text"]
                #expect(text == .string(index < 3 ? "note \(index), edited" : "note \(index)"))
            }
            var created = 0
            var token: ChangeToken?
            while true {
                let batch = try reader.publicDatabase.fetchChanges(since: token, limit: 400)
                created += batch.changes.filter { $0.kind == .created }.count
                token = batch.token
                if !batch.moreComing { break }
            }
            #expect(created == count)
        }
    }

    @Test("A first catch-up past the change history leaves the feed as writing and pruning every change would have")
    func bulkLoadKeepsTheLastChanges() throws {
        let directory = try TemporaryDirectory()
        try writeLog(directory, count: 1)
        // This one has an entry before the rest arrives, so it applies them in an ordinary poll, change by change.
        let polled = try openClient(directory, "polled", historyLimit: 50)
        #expect(try polled.refreshPublicDatabase() == 1)
        try writeLog(directory, count: 119, from: 1)
        #expect(try polled.refreshPublicDatabase() == 119)
        // This one starts empty: a bulk load, which holds its change rows back until it ends.
        let bulk = try openClient(directory, "bulk", historyLimit: 50)
        #expect(try bulk.refreshPublicDatabase() == 120)
        try writeLog(directory, count: 1, from: 120)
        for reader in [polled, bulk] {
            let database = reader.publicDatabase
            let token = try database.currentChangeToken()
            #expect(token.sequence == 120)
            #expect(#expect(throws: StoreError.self) { try database.fetchChanges(since: nil) }?.code == .changeTokenExpired)
            let before = ChangeToken(databaseID: token.databaseID, sequence: 69)
            #expect(#expect(throws: StoreError.self) { try database.fetchChanges(since: before) }?.code == .changeTokenExpired)
            let kept = try database.fetchChanges(since: ChangeToken(databaseID: token.databaseID, sequence: 70), limit: 400)
            #expect(kept.changes.map(\.recordID.recordName) == (70..<120).map { "n\($0)" })
            #expect(kept.changes.allSatisfy { $0.kind == .created })
            #expect(kept.token == token)
            // The numbering goes on from there.
            #expect(try reader.refreshPublicDatabase() == 1)
            let next = try database.fetchChanges(since: token, limit: 400)
            #expect(next.changes.map(\.recordID.recordName) == ["n120"])
            #expect(next.token.sequence == 121)
        }
    }

    @Test("Little to read: no report at all")
    func shortCatchUpIsQuiet() throws {
        let directory = try TemporaryDirectory()
        try writeLog(directory, count: 50)
        let reader = try openClient(directory, "reader")
        var reports = 0
        let applied = try reader.refreshPublicDatabase { _ in reports += 1 }
        #expect(applied == 50)
        #expect(reports == 0)
        #expect(try reader.publicDatabase.countRecords(matching: Query(recordType: "Note")) == 50)
    }
}
