import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore

extension MultiProcessTests {
    /// The log engine with real processes, and a real second OS user.
    @Suite(.startsProcesses, .serialized)
    struct LogProcessTests {
        /// `store-worker` arguments for a log container, with the private data directory standing for a host or a user.
        static func arguments(_ command: String, _ container: String, privateDir: String, _ more: [String] = []) -> [String] {
            [command, "--container", container, "--mode", "local", "--engine", "log", "--private-dir", privateDir] + more
        }

        @Test("Three processes write one log container at once (two share a cache, as two terminals do); every client ends with all records, once each")
        func processesSeeEachOthersRecords() async throws {
            let directory = try TemporaryDirectory()
            let container = directory.path("container").path
            let privateDirs = ["a", "a", "b"].map { directory.path("private-\($0)").path }
            try await Fixture.run(Self.arguments("info", container, privateDir: privateDirs[0]))
            let workers = try privateDirs.enumerated().map { index, privateDir in
                try WorkerProcess("log writer \(index)", Self.arguments("save", container, privateDir: privateDir,
                                                                      ["--count", "200", "--prefix", "w\(index)"]))
            }
            defer { workers.forEach { $0.killIfRunning() } }
            for worker in workers {
                let end = try await worker.finish(timeout: .seconds(600))
                #expect(end == .success, "\(worker.name) ended with \(end): \(worker.errorText)")
            }
            let expected = Set((0..<3).flatMap { index in (0..<200).map { "w\(index)-\($0)" } })
            for reader in ["a", "b", "fresh"] {
                let lines = try await Fixture.run(Self.arguments("check", container, privateDir: directory.path("private-\(reader)").path),
                                                  timeout: .seconds(300))
                let report = try JSONDecoder().decode(Fixture.CheckReport.self, from: Data((lines.last ?? "").utf8))
                let difference = Fixture.difference(present: report.present, expected: expected)
                #expect(difference.missing.isEmpty, "\(reader) misses \(difference.missing.prefix(10))")
                #expect(difference.extra.isEmpty, "\(reader) has extra \(difference.extra.prefix(10))")
                #expect(report.duplicated.isEmpty)
                #expect(report.createdEntries == expected.count)
            }
            // One log per writing process: the two terminals of one cache did not share a log.
            let account = UserIdentity.current.recordID.recordName
            let logs = try FileManager.default.contentsOfDirectory(atPath: "\(container)/logs/\(account)").filter { $0.hasSuffix(".log") }
            #expect(logs.count == 3)
        }

        @Test("A log writer killed with SIGKILL keeps every save it reported, and its next run appends to the same log")
        func killedLogWriterLosesNothing() async throws {
            let directory = try TemporaryDirectory()
            let container = directory.path("container").path
            let writerData = directory.path("private-writer").path
            let victim = try WorkerProcess("log victim", Self.arguments("save", container, privateDir: writerData,
                                                                        ["--count", "1000000", "--prefix", "victim"]))
            defer { victim.killIfRunning() }
            let started = await victim.waitForLines(150, timeout: .seconds(300))
            #expect(started, "the victim never reported 150 saves: \(victim.errorText)")
            victim.signal(SIGKILL)
            _ = try await victim.finish(timeout: .seconds(30))
            let reported = victim.lines
            try await Fixture.run(Self.arguments("save", container, privateDir: writerData, ["--count", "20", "--prefix", "after"]))

            let lines = try await Fixture.run(Self.arguments("check", container, privateDir: directory.path("private-reader").path))
            let report = try JSONDecoder().decode(Fixture.CheckReport.self, from: Data((lines.last ?? "").utf8))
            let present = Set(report.present)
            #expect(reported.filter { !present.contains($0) }.isEmpty, "saves the victim reported are gone")
            #expect(present.filter { $0.hasPrefix("after-") }.count == 20, "entries after the victim's torn tail were not all read")
            let victims = present.filter { $0.hasPrefix("victim-") }.count
            #expect(victims == reported.count || victims == reported.count + 1)
            let account = UserIdentity.current.recordID.recordName
            #expect(try FileManager.default.contentsOfDirectory(atPath: "\(container)/logs/\(account)").filter { $0.hasSuffix(".log") }.count == 1)
        }

        @Test("Another OS user cannot write, replace or remove my log directory, and writes their own, which I read")
        func anotherUserCannotTouchMyLog() async throws {
            let carol = try OSUser.ensure(OSUserPermissionTests.other)
            let directory = try TemporaryDirectory()
            let containerPath = try directory.sharedDirectory("container")
            var options = Container.Options(privateDataDirectory: directory.path("root-data"))
            options.engine = .log
            let mine = try Container(url: URL(fileURLWithPath: containerPath), options: options)
            var channel = RecordStore.Record(recordType: "Channel", recordID: RecordID(recordName: "channel.root"))
            channel["topic"] = .string("mine")
            try mine.publicDatabase.save(channel)
            let me = mine.currentUser.recordID.recordName
            let myDirectory = "\(containerPath)/logs/\(me)"
            let myLog = try FileManager.default.contentsOfDirectory(atPath: myDirectory).first { $0.hasSuffix(".log") } ?? ""
            let before = try Data(contentsOf: URL(fileURLWithPath: "\(myDirectory)/\(myLog)"))

            let attempts = [
                "printf x >> '\(myDirectory)/\(myLog)'",
                "mv '\(myDirectory)' '\(containerPath)/logs/stolen'",
                "rm -rf '\(myDirectory)'",
                "touch '\(myDirectory)/00000000-0000-0000-0000-000000000000.log'",
                "mv '\(myDirectory)/\(myLog)' '\(myDirectory)/x.log'",
            ]
            for attempt in attempts {
                let status = try Self.shell(attempt, as: carol)
                #expect(status != 0, "carol could run: \(attempt)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: "\(myDirectory)/\(myLog)")) == before)
            // Besides the log, the folder holds only my published key.
            #expect(try FileManager.default.contentsOfDirectory(atPath: myDirectory).sorted() == ["identity.pub", myLog].sorted())

            let carolData = try directory.homeFor(carol, "carol-data")
            try await Fixture.run(["save", "--container", containerPath, "--mode", "local", "--engine", "log", "--count", "3", "--prefix", "carol"],
                                  launcher: carol.launcher(dataHome: carolData))
            try mine.refreshPublicDatabase()
            let theirs = try mine.publicDatabase.records(matching: Query(recordType: "Item")).records
            #expect(theirs.map(\.recordID.recordName).sorted() == ["carol-0", "carol-1", "carol-2"])
            #expect(theirs.allSatisfy { $0.creatorUserRecordID?.recordName == "_\(carol.uid)_\(carol.name)" })
            let carolDirectory = try FileStatus("\(containerPath)/logs/_\(carol.uid)_\(carol.name)")
            #expect(carolDirectory.owner == carol.uid)
        }

        /// Runs `command` with `/bin/sh` as `user`; returns its exit status.
        static func shell(_ command: String, as user: OSUser) throws -> Int32 {
            let process = try SpawnedProcess(["/usr/sbin/runuser", "-u", user.name, "--", "/bin/sh", "-c", command])
            process.waitUntilExit()
            return process.terminationStatus
        }
    }
}

extension MultiProcessTests.LogProcessTests {
    @Test("A reader killed with SIGKILL in the middle of its first catch-up ends, on its next start, with every record once")
    func killedCatchUpLeavesNothingHalfDone() async throws {
        let directory = try TemporaryDirectory()
        let container = directory.path("container").path
        var options = Container.Options(privateDataDirectory: directory.path("private-writer"))
        options.engine = .log
        options.mode = .local
        let writer = try Container(url: directory.path("container"), options: options)
        // Fewer than the change history keeps (100,000), so that `check` reads every creation from the feed.
        let count = 90_000
        for start in stride(from: 0, to: count, by: 15_000) {
            try writer.appendToOwnLogUnapplied((start..<start + 15_000).map { index in
                var record = Record(recordType: "Item", recordID: RecordID(recordName: "item-\(index)"))
                record["text"] = .string("item \(index)")
                return record
            })
        }
        let readerData = directory.path("private-reader").path
        let victim = try WorkerProcess("catching-up reader", Self.arguments("check", container, privateDir: readerData, ["--catch-up-progress"]))
        defer { victim.killIfRunning() }
        // The first report comes after 10,000 entries and the second after 50,000 more, all in one transaction;
        // the last 30,000 are still being read when the kill comes.
        let started = await victim.waitForLines(2, timeout: .seconds(600))
        #expect(started, "the reader never reported two steps: \(victim.errorText)")
        victim.signal(SIGKILL)
        let end = try await victim.finish(timeout: .seconds(30))
        #expect(end == WorkerProcess.Termination(status: SIGKILL, signaled: true), "the reader ended with \(end) before it was killed: \(victim.lines.suffix(3))")
        #expect(!victim.lines.contains { $0.hasPrefix("caught up") })

        let lines = try await Fixture.run(Self.arguments("check", container, privateDir: readerData, ["--catch-up-progress"]), timeout: .seconds(600))
        #expect(lines.contains("caught up: \(count) entries"), "the restarted reader did not catch up from the beginning: \(lines.suffix(3))")
        let report = try JSONDecoder().decode(Fixture.CheckReport.self, from: Data((lines.last ?? "").utf8))
        let expected = Set((0..<count).map { "item-\($0)" })
        let difference = Fixture.difference(present: report.present, expected: expected)
        #expect(difference.missing.isEmpty, "missing \(difference.missing.prefix(10))")
        #expect(difference.extra.isEmpty, "extra \(difference.extra.prefix(10))")
        #expect(report.duplicated.isEmpty)
        #expect(report.createdEntries == count)
    }
}
