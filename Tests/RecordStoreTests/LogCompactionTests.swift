import Foundation
import GRDB
import Testing
@testable import RecordStore

/// A writer compacting its own log: readers old and new end with the cache the original log gives.
@Suite(.serialized)
struct LogCompactionTests {
    let alice = LogFixture.alice, bob = LogFixture.bob

    /// Keeps and applies entries in one poll, as `LogFixture.apply` does, and tells how many were new.
    @discardableResult
    func poll(_ entries: [LogEntry], into cache: SQLiteStorage) throws -> Int {
        try cache.write { writer in
            guard let access = writer as? SQLiteAccess else { throw StoreError(.internalError, "not SQLite") }
            let replay = LogReplay(access, polling: true)
            var touched: Set<RecordID> = []
            for entry in entries where try replay.remember(entry) { touched.insert(entry.recordID) }
            // In a fixed order: which of a poll's records settles first can change the events in between.
            try replay.settle(touched.sorted { $0.recordName < $1.recordName }, historyLimit: 100_000)
            return touched.count
        }
    }

    /// The change feed as the cache keeps it: record name and kind, in order.
    func feed(_ cache: SQLiteStorage) throws -> [String] {
        try cache.read { reader in
            guard let access = reader as? SQLiteAccess else { return ["not SQLite"] }
            return try Row.fetchAll(access.db, sql: "SELECT name, kind FROM change ORDER BY seq").map { "\($0[0] as String? ?? "?") \($0[1] as Int64? ?? -1)" }
        }
    }

    /// A random history: one own log (alice's first client, in clock order) and the other logs' entries.
    func history(_ random: inout SeededGenerator) throws -> (own: [LogEntry], others: [LogEntry]) {
        let own = UUID(), aliceB = UUID(), bobA = UUID(), bobB = UUID()
        let writers: [(account: String, client: UUID)] = [(alice, own), (alice, own), (alice, aliceB), (bob, bobA), (bob, bobB)]
        let channels = ["c0", "c1"], messages = ["m0", "m1", "m2"]
        var ownEntries: [LogEntry] = [], others: [LogEntry] = []
        var used: Set<String> = []
        for _ in 0..<Int.random(in: 8...30, using: &random) {
            let writer = writers[Int.random(in: 0..<writers.count, using: &random)]
            // Stamps are unique per client and record; the own log's are put in clock order below.
            var time = UInt64.random(in: 1...60, using: &random)
            let isChannel = Bool.random(using: &random)
            let name = isChannel ? channels[Int.random(in: 0..<channels.count, using: &random)] : messages[Int.random(in: 0..<messages.count, using: &random)]
            while !used.insert("\(writer.client) \(name) \(time)").inserted { time += 61 }
            let entry: LogEntry
            if Int.random(in: 0..<10, using: &random) < 3 {
                entry = LogFixture.delete(name, by: writer.account, client: writer.client, at: time)
            } else if isChannel {
                entry = try LogFixture.save(name, by: writer.account, client: writer.client, at: time, type: "Channel",
                                            fields: ["topic": .string("topic \(time) by \(writer.account)")])
            } else {
                let channel = channels[Int.random(in: 0..<channels.count, using: &random)]
                entry = try LogFixture.save(name, by: writer.account, client: writer.client, at: time, type: "Message", fields: [
                    "channel": .reference(Reference(recordID: RecordID(recordName: channel), action: .deleteSelf)),
                    "text": .string("text \(time) by \(writer.account)"),
                ])
            }
            if writer.client == own { ownEntries.append(entry) } else { others.append(entry) }
        }
        return (ownEntries.sorted { $0.time < $1.time }, others.shuffled(using: &random))
    }

    @Test("Random histories: a reader of the compacted log, and one that read the original first, match a reader of the original; the old reader's feed gains nothing")
    func compactionKeepsTheFold() throws {
        var feedRows = 0, stubs = 0
        for seed in UInt64(1)...40 {
            var random = SeededGenerator(seed: seed)
            let (own, others) = try history(&random)
            guard let ownClient = own.first?.client else { continue }
            let header = LogHeader(client: ownClient, account: alice, generation: 1)
            // Compaction happens after `cut` own entries; the rest are appended to the compacted file.
            let cut = Int.random(in: 0...own.count, using: &random)
            let plan = LogCompaction.plan(Array(own[..<cut]), header: header)
            stubs += plan.filter { if case .save(let saved) = $0.change { saved.fields.isEmpty } else { false } }.count
            let compacted = plan + own[cut...]
            let directory = try TemporaryDirectory()

            let reference = try LogFixture.cache(in: directory, name: "reference.sqlite")
            try poll(others + own, into: reference)
            let expected = try LogFixture.snapshot(reference)

            let fresh = try LogFixture.cache(in: directory, name: "fresh.sqlite")
            try poll(compacted + others, into: fresh)
            #expect(try LogFixture.snapshot(fresh) == expected, "seed \(seed): a fresh reader of the compacted log")
            // One entry per poll, in file order: a reader catching up in steps ends the same.
            let stepwise = try LogFixture.cache(in: directory, name: "stepwise.sqlite")
            for entry in others + compacted { try poll([entry], into: stepwise) }
            #expect(try LogFixture.snapshot(stepwise) == expected, "seed \(seed): a reader of the compacted log in steps")

            // A reader that read part of the original and some other logs, then the compacted file and the rest,
            // beside a control that read the same, but the original's rest instead of the compacted file.
            let read = Int.random(in: 0...cut, using: &random)
            let othersFirst = Int.random(in: 0...others.count, using: &random)
            let old = try LogFixture.cache(in: directory, name: "old.sqlite")
            let control = try LogFixture.cache(in: directory, name: "control.sqlite")
            for cache in [old, control] { try poll(Array(others[..<othersFirst]) + own[..<read], into: cache) }
            try poll(compacted + others[othersFirst...], into: old)
            try poll(Array(own[read...]) + others[othersFirst...], into: control)
            #expect(try LogFixture.snapshot(old) == expected, "seed \(seed): a reader of the original, then the compacted log")
            #expect(try LogFixture.snapshot(control) == expected, "seed \(seed): the control")
            let (oldFeed, controlFeed) = (try feed(old), try feed(control))
            #expect(oldFeed == controlFeed, "seed \(seed): the old reader's change feed \(oldFeed) \(controlFeed) own \(own.map { "\($0.recordID.recordName)@\($0.time.rawValue)\($0.change == .delete ? "D" : "S")" }) others \(others.map { "\($0.recordID.recordName)@\($0.time.rawValue)\($0.account.suffix(3))\($0.change == .delete ? "D" : "S")" }) cut \(cut) read \(read) othersFirst \(othersFirst)")

            // A reader that had read everything before compaction gains no entries and no events from the new file.
            let caughtUp = try LogFixture.cache(in: directory, name: "caught-up.sqlite")
            try poll(others + own[..<cut], into: caughtUp)
            let before = (try LogFixture.snapshot(caughtUp), try feed(caughtUp))
            #expect(try poll(plan, into: caughtUp) == 0, "seed \(seed)")
            #expect(try LogFixture.snapshot(caughtUp) == before.0)
            #expect(try feed(caughtUp) == before.1)
            feedRows += try feed(reference).count
        }
        // The checks above mean something only if histories made events and stubs.
        #expect(feedRows > 0)
        #expect(stubs > 0)
    }

    @Test("A stub is never the whole entry of a record's latest save; deletes, foreign entries and repeated stamps are handled")
    func planKeepsLatestAndDeletes() throws {
        let client = UUID(), other = UUID()
        let header = LogHeader(client: client, account: alice, generation: 0)
        let entries = [
            try LogFixture.save("a", by: alice, client: client, at: 1, fields: ["t": .string("one")]),
            LogFixture.delete("a", by: alice, client: client, at: 2),
            try LogFixture.save("a", by: alice, client: client, at: 3, fields: ["t": .string("two")]),
            try LogFixture.save("a", by: alice, client: client, at: 3, fields: ["t": .string("repeated stamp")]),
            try LogFixture.save("b", by: bob, client: client, at: 4),
            try LogFixture.save("c", by: alice, client: other, at: 5),
            try LogFixture.save("a", by: alice, client: client, at: 6, fields: ["t": .string("last")]),
        ]
        let plan = LogCompaction.plan(entries, header: header)
        #expect(plan.map(\.time.rawValue) == [2, 6, 1, 3])
        guard plan.count == 4, case .save(let last) = plan[1].change, case .save(let stub) = plan[2].change else {
            Issue.record("unexpected plan \(plan)")
            return
        }
        #expect(last.fields.contains("last"))
        #expect(stub.fields.isEmpty && stub.changeTag.isEmpty)
        #expect(plan[0].change == .delete)
    }

    // MARK: Files

    @Test("The automatic trigger: a log past 1 MB that compacts to under half is marked when opened; a small one is not")
    func automaticTriggerWeighsTheOpenedLog() throws {
        let directory = try TemporaryDirectory()
        let client = UUID()
        let header = LogHeader(client: client, account: alice, generation: 0)
        let text = String(repeating: "y", count: 50_000)
        let entries = try (1...30).map { try LogFixture.save("big", by: alice, client: client, at: UInt64($0), fields: ["t": .string("\($0) \(text)")]) }
        let url = directory.url.appendingPathComponent(LogDirectory.fileName(for: client))
        close(try LogFixture.file(url, try LogFixture.bytes(header: header, entries: entries)))
        let handle = try DirectoryHandle(path: directory.url.path, naming: ContainerNaming())
        let appender = try LogAppender(in: handle, client: client, account: alice, mode: 0o600)
        #expect(appender.isWorthCompacting)
        let sizes = try appender.compact(in: handle)
        #expect(sizes.after < 60_000, "\(sizes)")
        #expect(appender.header.generation == 1)
        #expect(try !LogAppender(in: handle, client: client, account: alice, mode: 0o600).isWorthCompacting)
        #expect(LogCompaction.isWorthIt(size: 2 << 20, compacted: 1 << 20))
        #expect(!LogCompaction.isWorthIt(size: 2 << 20, compacted: (1 << 20) + 1))
        #expect(!LogCompaction.isWorthIt(size: 1_000_000, compacted: 1))
    }

    func open(_ directory: TemporaryDirectory, client: String) throws -> Container {
        try Self.open(container: directory.path("container"), privateDirectory: directory.path(client))
    }

    static func open(container: URL, privateDirectory: URL) throws -> Container {
        var options = Container.Options(privateDataDirectory: privateDirectory)
        options.engine = .log
        return try Container(url: container, options: options)
    }

    func logDirectory(_ directory: TemporaryDirectory, _ container: Container) -> URL {
        directory.path("container/logs/\(container.currentUser.recordID.recordName)")
    }

    func fileSize(_ url: URL) throws -> Int64 {
        Int64(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? -1)
    }

    @Test("A record saved 1,000 times compacts to a small file; a reader that read the original gains no events, a fresh reader sees the same")
    func thousandSavesCompactSmall() throws {
        let directory = try TemporaryDirectory()
        let writer = try open(directory, client: "writer"), old = try open(directory, client: "old")
        let padding = String(repeating: "x", count: 400)
        var note = RecordStore.Record(recordType: "Note", recordID: RecordID(recordName: "note"))
        var channel = RecordStore.Record(recordType: "Channel", recordID: RecordID(recordName: "channel.kept"))
        channel["topic"] = .string("stays")
        channel = try writer.publicDatabase.save(channel)
        for index in 0..<1_000 {
            note["text"] = .string("version \(index) \(padding)")
            note = try writer.publicDatabase.save(note)
        }
        try old.refreshPublicDatabase()
        let token = try old.publicDatabase.fetchChanges(since: nil).token

        guard let sizes = try writer.compactOwnLog() else {
            Issue.record("the writer has no log to compact")
            return
        }
        // Besides its logs, an account's folder holds its published key.
        let logs = try FileManager.default.contentsOfDirectory(atPath: logDirectory(directory, writer).path).filter { $0 != "identity.pub" }
        #expect(logs.count == 1, "no temporary file is left: \(logs)")
        #expect(sizes.before > 400_000)
        #expect(sizes.after < sizes.before / 3, "\(sizes)")
        print("compacted 1,000 saves of 400-byte text: \(sizes.before) bytes to \(sizes.after)")
        let file = logDirectory(directory, writer).appendingPathComponent(logs.first ?? "")
        #expect(try fileSize(file) == sizes.after)

        #expect(try old.refreshPublicDatabase() == 0)
        #expect(try old.publicDatabase.fetchChanges(since: token).changes.isEmpty)
        let fresh = try open(directory, client: "fresh")
        try fresh.refreshPublicDatabase()
        for reader in [old, fresh, writer] {
            #expect(try reader.publicDatabase.record(for: note.recordID)["text"] == .string("version 999 \(padding)"))
            #expect(try reader.publicDatabase.record(for: channel.recordID)["topic"] == .string("stays"))
        }
        // The writer goes on appending to the compacted file, and both readers see it.
        note["text"] = .string("after")
        note = try writer.publicDatabase.save(note)
        try old.refreshPublicDatabase()
        try fresh.refreshPublicDatabase()
        #expect(try old.publicDatabase.record(for: note.recordID)["text"] == .string("after"))
        #expect(try fresh.publicDatabase.record(for: note.recordID)["text"] == .string("after"))
        // A second compaction of a compacted log keeps what the first kept, under a new generation.
        let again = try writer.compactOwnLog()
        #expect(again.map { $0.after <= sizes.after + 1_000 } == true)
        #expect(try old.refreshPublicDatabase() == 0)
    }

    @Test("A temporary file a crash left mid-compaction is not read, and the next compaction removes it")
    func leftOverTemporaryFileIsIgnored() throws {
        let directory = try TemporaryDirectory()
        let writer = try open(directory, client: "writer")
        var record = RecordStore.Record(recordType: "Note", recordID: RecordID(recordName: "n"))
        for index in 0..<5 {
            record["text"] = .string("v\(index)")
            record = try writer.publicDatabase.save(record)
        }
        let folder = logDirectory(directory, writer)
        guard let log = try FileManager.default.contentsOfDirectory(atPath: folder.path).first(where: { $0.hasSuffix(".log") }),
              let client = LogDirectory.client(inFileName: log) else {
            Issue.record("no log")
            return
        }
        // What a crash between writing and renaming leaves: a half-written compacted copy beside the log.
        let whole = try Data(contentsOf: folder.appendingPathComponent(log))
        let temporary = folder.appendingPathComponent(LogCompaction.temporaryName(for: client))
        try whole.prefix(whole.count / 2).write(to: temporary)
        let reader = try open(directory, client: "reader")
        try reader.refreshPublicDatabase()
        #expect(try reader.publicDatabase.record(for: record.recordID)["text"] == .string("v4"))
        #expect(FileManager.default.fileExists(atPath: temporary.path))
        try writer.compactOwnLog()
        #expect(!FileManager.default.fileExists(atPath: temporary.path))
        #expect(try reader.refreshPublicDatabase() == 0)
        let fresh = try open(directory, client: "fresh")
        try fresh.refreshPublicDatabase()
        #expect(try fresh.publicDatabase.record(for: record.recordID)["text"] == .string("v4"))
    }

    @Test("A reader polling on another thread while the writer saves and compacts always sees a whole, never older record")
    func readerDuringCompactionSeesConsistentCache() async throws {
        let directory = try TemporaryDirectory()
        let writer = try open(directory, client: "writer")
        var counter = RecordStore.Record(recordType: "Note", recordID: RecordID(recordName: "counter"))
        counter["n"] = .int64(0)
        counter = try writer.publicDatabase.save(counter)
        let rounds = 40
        let (containerURL, readerDirectory) = (directory.path("container"), directory.path("reader"))
        let reader = Task.detached { () throws -> [String] in
            let reader = try Self.open(container: containerURL, privateDirectory: readerDirectory)
            var problems: [String] = []
            var highest: Int64 = -1
            var polls = 0
            while highest < Int64(rounds * 10), polls < 100_000 {
                polls += 1
                try reader.refreshPublicDatabase()
                let seen = try reader.publicDatabase.records(matching: Query(recordType: "Note")).records
                guard seen.count == 1, case .int64(let value)? = seen.first?["n"] else {
                    problems.append("poll \(polls) saw \(seen.count) notes: \(seen.map(\.fields))")
                    continue
                }
                if value < highest { problems.append("poll \(polls) went back from \(highest) to \(value)") }
                highest = max(highest, value)
            }
            return problems
        }
        for round in 1...rounds {
            for step in 1...10 {
                counter["n"] = .int64(Int64((round - 1) * 10 + step))
                counter = try writer.publicDatabase.save(counter)
            }
            try writer.compactOwnLog()
        }
        let problems = try await reader.value
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }
}

extension MultiProcessTests {
    /// Compaction seen from another process.
    @Suite(.serialized)
    struct LogCompactionProcessTests {
        @Test("Fresh reader processes started while a writer saves and compacts each find a whole prefix of its records, each created once")
        func readerProcessesDuringCompaction() async throws {
            let directory = try TemporaryDirectory()
            let containerURL = directory.path("container"), writerDirectory = directory.path("writer")
            // The writer makes the container before any reader looks at it.
            _ = try LogCompactionTests.open(container: containerURL, privateDirectory: writerDirectory)
            let total = 150
            let writer = Task.detached { () throws -> Int in
                let container = try LogCompactionTests.open(container: containerURL, privateDirectory: writerDirectory)
                var compactions = 0
                for index in 0..<total {
                    var record = RecordStore.Record(recordType: "Item", recordID: RecordID(recordName: "c-\(index)"))
                    for version in 0..<3 {
                        record["v"] = .int64(Int64(version))
                        record = try container.publicDatabase.save(record)
                    }
                    if index % 3 == 2, try container.compactOwnLog() != nil { compactions += 1 }
                }
                return compactions
            }
            var reports: [Fixture.CheckReport] = []
            var readers = 0
            repeat {
                readers += 1
                let lines = try await Fixture.run(LogProcessTests.arguments("check", containerURL.path,
                                                                            privateDir: directory.path("reader-\(readers)").path))
                reports.append(try JSONDecoder().decode(Fixture.CheckReport.self, from: Data((lines.last ?? "").utf8)))
            } while !(reports.last.map { $0.present.count == total } ?? false) && readers < 40
            let compactions = try await writer.value
            #expect(compactions == total / 3)
            // Readers that found some but not all records ran while the writer was saving and compacting.
            print("readers found \(reports.map(\.present.count)) of \(total) records")
            for (index, report) in reports.enumerated() {
                let expected = Set((0..<report.present.count).map { "c-\($0)" })
                #expect(Set(report.present) == expected, "reader \(index + 1) saw \(report.present.sorted())")
                #expect(report.duplicated.isEmpty)
                #expect(report.createdEntries == report.present.count)
            }
            #expect(reports.last?.present.count == total)
        }
    }
}
