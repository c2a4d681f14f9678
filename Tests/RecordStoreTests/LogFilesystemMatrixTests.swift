import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore

/// Issue 13: the `log` engine on real network filesystems, each mounted twice from a server on
/// 127.0.0.1 (two mounts are what two hosts look like to each other). Writers are `store-worker save`
/// processes, receivers are `sync-worker receive` processes (a sync engine each), every one with a
/// private data directory of its own, as separate hosts would have. Skipped, with the reason
/// printed, where a filesystem's packages or FUSE are missing; `.ci/run` installs them.
@Suite(.startsProcesses, .serialized) struct LogFilesystemMatrixTests {
    static let writers = 8
    static let perWriter = 200

    /// Each filesystem that can be mounted here; the others are skipped with their reason printed.
    static let available: [NetworkShare] = NetworkShare.allCases.filter(\.isAvailable)

    // MARK: Processes

    /// Mounts `share` twice under `dir` and makes a log container through mount A, as
    /// `fatchat init DIR --engine log` does; returns the container as seen through A and through B.
    static func container(on share: NetworkShare, in dir: TemporaryDirectory) async throws -> (a: URL, b: URL) {
        let mounts = try share.up(in: dir.url)
        do {
            let sides = (a: mounts.a.appendingPathComponent("chat"), b: mounts.b.appendingPathComponent("chat"))
            try await Fixture.run(["info", "--container", sides.a.path, "--engine", "log", "--private-dir", dir.path("private-init").path],
                                  timeout: .seconds(120))
            return sides
        } catch {
            share.down(in: dir.url)
            throw error
        }
    }

    static func save(_ name: String, container: URL, privateDir: URL, count: Int, prefix: String) throws -> WorkerProcess {
        try WorkerProcess(name, ["save", "--container", container.path, "--engine", "log", "--private-dir", privateDir.path,
                                 "--type", "Message", "--count", "\(count)", "--prefix", prefix])
    }

    static func receive(_ name: String, container: URL, privateDir: URL, expect: Int, timeout: Int) throws -> WorkerProcess {
        try WorkerProcess(name, executable: "SyncWorker", ["receive", "--container", container.path, "--private-data", privateDir.path,
                                                           "--poll", "0.25", "--expect", "\(expect)", "--timeout", "\(timeout)"])
    }

    static func send(_ name: String, container: URL, privateDir: URL, count: Int, prefix: String, from: Int = 0) throws -> WorkerProcess {
        try WorkerProcess(name, executable: "SyncWorker", ["send", "--container", container.path, "--private-data", privateDir.path,
                                                           "--poll", "0.25", "--count", "\(count)", "--prefix", prefix,
                                                           "--from", "\(from)", "--drain-timeout", "240"])
    }

    /// `store-worker check` through `container` with a fresh cache in `privateDir`.
    static func check(_ container: URL, privateDir: URL) async throws -> Fixture.CheckReport {
        let lines = try await Fixture.run(["check", "--container", container.path, "--engine", "log", "--private-dir", privateDir.path,
                                           "--type", "Message"], timeout: .seconds(300))
        guard let json = lines.last else { throw WorkerProcess.Failure(description: "`store-worker check` printed nothing.") }
        return try JSONDecoder().decode(Fixture.CheckReport.self, from: Data(json.utf8))
    }

    /// How long a mount may show a log shorter than it is: sshfs holds a file's size for 20 s (its default
    /// attribute cache), GlusterFS for 1 s. A fresh cache read through a mount sooner may miss the newest
    /// messages; they are late, not lost.
    static func staleness(of share: NetworkShare) -> Duration { share == .sshfs ? .seconds(20) : .seconds(2) }

    /// `check` through `container`, each time with a fresh cache, until every name in `expected` is there or
    /// the mount's cache has certainly expired: what is missing then is lost. Returns the last report and the tries.
    static func checkUntilComplete(_ container: URL, expected: Set<String>, share: NetworkShare, privateDir: (Int) -> URL) async throws
        -> (report: Fixture.CheckReport, tries: Int) {
        let deadline = ContinuousClock.now + staleness(of: share) + .seconds(10)
        var tries = 0
        while true {
            tries += 1
            let report = try await check(container, privateDir: privateDir(tries))
            if expected.isSubset(of: report.present) || ContinuousClock.now > deadline { return (report, tries) }
            try await Task.sleep(for: .seconds(2))
        }
    }

    /// How many logs a listing of `logs/` and its folders shows through `container`'s mount.
    /// (FileManager's recursive listing finds none through smbnetfs, so each folder is listed by itself.)
    static func logCount(_ container: URL) -> Int {
        let logs = container.appendingPathComponent("logs")
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: logs.path)) ?? []
        return folders.reduce(0) { count, folder in
            count + ((try? FileManager.default.contentsOfDirectory(atPath: logs.appendingPathComponent(folder).path)) ?? []).filter { $0.hasSuffix(".log") }.count
        }
    }

    /// Each log as its own bytes read through `container`'s mount show it: entries, where a scan
    /// stopped and why. A failure prints it, so a lost message can be told from a late one.
    static func logScans(_ container: URL) -> [String] {
        let logs = container.appendingPathComponent("logs")
        var lines: [String] = []
        for folder in ((try? FileManager.default.contentsOfDirectory(atPath: logs.path)) ?? []).sorted() {
            let path = logs.appendingPathComponent(folder)
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: path.path)) ?? []).sorted() where name.hasSuffix(".log") {
                let fd = open(path.appendingPathComponent(name).path, O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else {
                    lines.append("\(folder)/\(name): cannot open (\(errno))")
                    continue
                }
                defer { close(fd) }
                var info = stat()
                _ = fstat(fd, &info)
                guard case .success(let (_, headerSize)) = LogFileReader.header(of: fd) else {
                    lines.append("\(folder)/\(name): \(info.st_size) bytes, no header")
                    continue
                }
                let scan = LogFileReader.scan(fd, from: Int64(headerSize))
                let names = scan.entries.map(\.recordID.recordName)
                lines.append("\(folder)/\(name): \(info.st_size) bytes, \(scan.entries.count) entries (\(names.first ?? "-") … \(names.last ?? "-")), stopped at \(scan.end): \(scan.stop)")
            }
        }
        return lines
    }

    /// Counts how often each name appears in a receiver's `got NAME` lines.
    static func received(_ lines: [String]) -> [String: Int] {
        lines.filter { $0.hasPrefix("got ") }.reduce(into: [:]) { $0[String($1.dropFirst(4)), default: 0] += 1 }
    }

    /// Notes when each line of each worker first arrived in this process, every 20 ms, until stopped.
    final class LineClock: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [String: [ContinuousClock.Instant]] = [:]
        private var stopped = false

        func start(_ workers: [WorkerProcess]) -> Task<Void, Never> {
            Task.detached { [self] in
                while !lock.withLock({ stopped }) {
                    let now = ContinuousClock.now
                    for worker in workers {
                        let lines = worker.lines
                        lock.withLock {
                            var times = seen[worker.name, default: []]
                            if times.count < lines.count { times += Array(repeating: now, count: lines.count - times.count) }
                            seen[worker.name] = times
                        }
                    }
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
        }

        func stop() { lock.withLock { stopped = true } }

        /// The time each of `worker`'s lines arrived, by line.
        func times(_ worker: WorkerProcess) -> [(String, ContinuousClock.Instant)] {
            let times = lock.withLock { seen[worker.name] ?? [] }
            return Array(zip(worker.lines, times))
        }
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }

    // MARK: The matrix

    @Test("In CI (CI=true), where .ci/run installs every server, no filesystem of the matrix is skipped")
    func everyFilesystemRunsInCI() {
        guard ProcessInfo.processInfo.environment["CI"] == "true" else { return }
        for share in NetworkShare.allCases {
            #expect(share.unavailableReason == nil, "CI=true, but \(share) cannot be mounted: \(share.unavailableReason ?? "")")
        }
    }

    @Test("8 writers × 200 over both mounts, 2 receivers on mount B: every message once through either mount, each receiver delivers each once",
          arguments: available)
    func eightWritersTwoMountsTwoReceivers(share: NetworkShare) async throws {
        let dir = try TemporaryDirectory()
        let (sideA, sideB) = try await Self.container(on: share, in: dir)
        defer { share.down(in: dir.url) }
        let total = Self.writers * Self.perWriter
        // The receivers' own limit only stops them if the test is gone; how late they may be is judged from
        // when the writers are done (a loaded CI machine can take minutes to write 1600 messages).
        let receivers = try (0..<2).map {
            try Self.receive("receiver\($0)", container: sideB, privateDir: dir.path("private-receiver\($0)"), expect: total, timeout: 900)
        }
        let started = ContinuousClock.now
        let writers = try (0..<Self.writers).map { index in
            try Self.save("writer\(index)", container: index % 2 == 0 ? sideA : sideB, privateDir: dir.path("private-writer\(index)"),
                          count: Self.perWriter, prefix: "w\(index)")
        }
        let clock = LineClock()
        let sampler = clock.start(writers + receivers)
        defer {
            clock.stop()
            (writers + receivers).forEach { $0.killIfRunning() }
        }

        for writer in writers {
            let end = try await writer.finish(timeout: .seconds(300))
            #expect(end == .success, "\(share) \(writer.name) ended with \(end): \(writer.errorText)")
            #expect(writer.lines.count == Self.perWriter, "\(share) \(writer.name) reported \(writer.lines.count) saves")
        }
        let written = ContinuousClock.now - started
        let expected = Set((0..<Self.writers).flatMap { w in (0..<Self.perWriter).map { "w\(w)-\($0)" } })
        // Every receiver delivered every message, once, within the mount's staleness (sshfs holds a size
        // for 20 s) and a generous margin for a loaded machine after the last writer was done.
        let patience = Self.staleness(of: share) + .seconds(100)
        let deadline = ContinuousClock.now + patience
        for receiver in receivers {
            let complete = await receiver.waitForLines(total, timeout: max(.zero, deadline - ContinuousClock.now))
            #expect(complete, "\(share) \(receiver.name) had \(receiver.lines.count) lines \(patience) after the writers were done: \(receiver.lines.suffix(2))")
            if !complete { receiver.killIfRunning() }
            let end = try await receiver.finish(timeout: .seconds(60))
            #expect(!complete || end == .success, "\(share) \(receiver.name) ended with \(end): \(receiver.errorText) \(receiver.lines.suffix(2))")
            let counts = Self.received(receiver.lines)
            let missing = expected.subtracting(counts.keys)
            let writersMissed = Set(missing.map { $0.prefix { $0 != "-" } }).sorted()
            #expect(missing.isEmpty, "\(share) \(receiver.name) never delivered \(missing.count) (all from \(writersMissed)): \(missing.sorted().prefix(10))")
            let twice = counts.filter { $0.value > 1 }.keys.sorted()
            #expect(twice.isEmpty, "\(share) \(receiver.name) delivered \(twice.count) more than once: \(twice.prefix(10))")
            #expect(Set(counts.keys).subtracting(expected).isEmpty)
        }
        let delivered = ContinuousClock.now - started
        clock.stop()
        await sampler.value
        // Read through either mount with a fresh cache: present exactly once.
        var table: [String] = []
        for (label, side) in [("A", sideA), ("B", sideB)] {
            let logs = Self.logCount(side)
            let (report, tries) = try await Self.checkUntilComplete(side, expected: expected, share: share) { dir.path("private-check-\(label)-\($0)") }
            let difference = Fixture.difference(present: report.present, expected: expected)
            #expect(difference.missing.isEmpty, "\(share) through \(label) misses \(difference.missing.count) (\(logs) logs listed, \(tries) tries): \(difference.missing.prefix(10)); \(Self.logScans(side))")
            #expect(report.createdEntries == expected.count, "\(share) through \(label): \(report.createdEntries) created entries")
            #expect(difference.extra.isEmpty, "\(share) through \(label) has extra \(difference.extra.prefix(10))")
            #expect(report.duplicated.isEmpty, "\(share) through \(label) created twice: \(report.duplicated.prefix(10))")
            table.append("through \(label) (\(logs) logs listed): present \(report.present.count - difference.extra.count)/\(expected.count), missing \(difference.missing.count), duplicated \(report.duplicated.count), complete at try \(tries)")
        }

        // Delivery latency: a writer's line (its save returned) to a receiver's `got` line.
        var savedAt: [String: ContinuousClock.Instant] = [:]
        for writer in writers { for (line, time) in clock.times(writer) { savedAt[line] = time } }
        var latencies: [Double] = []
        for receiver in receivers {
            for (line, time) in clock.times(receiver) where line.hasPrefix("got ") {
                guard let saved = savedAt[String(line.dropFirst(4))] else { continue }
                let seconds = (time - saved) / .seconds(1)
                latencies.append(max(0, seconds))
            }
        }
        latencies.sort()
        let p50 = Self.percentile(latencies, 0.50), p99 = Self.percentile(latencies, 0.99)
        print(String(format: "[figure] log engine on %@ (two mounts): %d×%d messages, %@; receiver delivery p50 %.2f s, p99 %.2f s, max %.2f s over %d deliveries; writers done in %@, receivers in %@",
                     share.rawValue, Self.writers, Self.perWriter, table.joined(separator: "; "), p50, p99, latencies.last ?? .nan,
                     latencies.count, "\(written)", "\(delivered)"))
    }

    // MARK: A killed writer, and a container that is briefly away

    /// GlusterFS when it is here (the real distributed filesystem), else bindfs.
    static let killShare: [NetworkShare] = available.contains(.glusterfs) ? [.glusterfs] : available.filter { $0 == .bindfs }

    @Test("A writer SIGKILLed mid-append keeps every save it reported, and its restart continues; a killed sender's outbox is sent by its restart",
          arguments: killShare)
    func killedWriterLosesNothing(share: NetworkShare) async throws {
        let dir = try TemporaryDirectory()
        let (sideA, sideB) = try await Self.container(on: share, in: dir)
        defer { share.down(in: dir.url) }

        // store-worker: killed after 100 reported saves, then run again with the same private data.
        let writerData = dir.path("private-victim")
        let victim = try Self.save("victim", container: sideA, privateDir: writerData, count: 1_000_000, prefix: "victim")
        defer { victim.killIfRunning() }
        let got100 = await victim.waitForLines(100, timeout: .seconds(180))
        #expect(got100, "\(share): the victim never reported 100 saves: \(victim.errorText)")
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...40)))
        victim.signal(SIGKILL)
        _ = try await victim.finish(timeout: .seconds(30))
        let reported = Set(victim.lines)
        let again = try Self.save("victim again", container: sideA, privateDir: writerData, count: 50, prefix: "after")
        #expect(try await again.finish(timeout: .seconds(180)) == .success, "\(share): \(again.errorText)")

        // sync-worker send: killed at random after it queued some; its restart sends what was queued.
        let senderData = dir.path("private-sender")
        let sender = try Self.send("sender", container: sideB, privateDir: senderData, count: 300, prefix: "queued")
        defer { sender.killIfRunning() }
        _ = await sender.waitForLines(Int.random(in: 40...120), timeout: .seconds(180))
        sender.signal(SIGKILL)
        _ = try await sender.finish(timeout: .seconds(30))
        let queued = Set(sender.lines.filter { $0.hasPrefix("queued ") }.map { String($0.dropFirst(7)) })
        let resumed = try Self.send("sender again", container: sideB, privateDir: senderData, count: 0, prefix: "queued")
        #expect(try await resumed.finish(timeout: .seconds(240)) == .success, "\(share): \(resumed.errorText) \(resumed.lines.suffix(2))")

        let mustBeThere = reported.union(queued).union((0..<50).map { "after-\($0)" })
        for (label, side) in [("A", sideA), ("B", sideB)] {
            let report = try await Self.checkUntilComplete(side, expected: mustBeThere, share: share) { dir.path("private-check-\(label)-\($0)") }.report
            let present = Set(report.present)
            let lost = reported.subtracting(present)
            #expect(lost.isEmpty, "\(share) through \(label): saves the victim reported are gone: \(lost.sorted().prefix(10))")
            let victims = present.filter { $0.hasPrefix("victim-") }.count
            #expect(victims == reported.count || victims == reported.count + 1, "\(share) through \(label): \(victims) victim records for \(reported.count) reported")
            #expect(present.filter { $0.hasPrefix("after-") }.count == 50, "\(share) through \(label): the restarted writer's saves are not all there")
            let unsent = queued.subtracting(present)
            #expect(unsent.isEmpty, "\(share) through \(label): queued messages never arrived: \(unsent.sorted().prefix(10))")
            #expect(report.duplicated.isEmpty, "\(share) through \(label) created twice: \(report.duplicated.prefix(10))")
            #expect(queued.count >= 40)
        }
        // One log per private data directory that wrote: the victim's restart appended to its own log.
        #expect(Self.logCount(sideA) == 2, "\(share): \(Self.logCount(sideA)) logs")
        print("[figure] \(share): the killed writer had reported \(reported.count) saves; the killed sender had queued \(queued.count)")
    }

    static let sshfsShare: [NetworkShare] = available.filter { $0 == .sshfs }

    /// sshfs answers a second listing of a directory it has held open for longer than its 20 s cache
    /// with nothing (and caches that). A client that lists `logs/` through one long-held descriptor
    /// then sees no account at all, and stops reading: a log that appears after 20 s never arrives.
    @Test("sshfs: a log that appears 25 s after the receiver started (past sshfs's 20 s cache) is read and delivered",
          arguments: sshfsShare)
    func logAppearingAfterTheCacheExpiredArrives(share: NetworkShare) async throws {
        let dir = try TemporaryDirectory()
        let (sideA, sideB) = try await Self.container(on: share, in: dir)
        defer { share.down(in: dir.url) }
        let receiver = try Self.receive("receiver", container: sideB, privateDir: dir.path("private-receiver"), expect: 20, timeout: 180)
        defer { receiver.killIfRunning() }
        try await Fixture.run(["save", "--container", sideA.path, "--engine", "log", "--private-dir", dir.path("private-early").path,
                               "--type", "Message", "--count", "10", "--prefix", "early"])
        try await Task.sleep(for: .seconds(25))
        try await Fixture.run(["save", "--container", sideA.path, "--engine", "log", "--private-dir", dir.path("private-late").path,
                               "--type", "Message", "--count", "10", "--prefix", "late"])
        let end = try await receiver.finish(timeout: .seconds(240))
        let counts = Self.received(receiver.lines)
        #expect(counts.keys.filter { $0.hasPrefix("early-") }.count == 10, "\(share): early messages delivered: \(counts.keys.sorted())")
        #expect(counts.keys.filter { $0.hasPrefix("late-") }.count == 10, "\(share): the late log's messages were not delivered: \(receiver.lines.suffix(2))")
        #expect(end == .success, "\(share) receiver ended with \(end): \(receiver.errorText)")
        let report = try await Self.check(sideB, privateDir: dir.path("private-check"))
        #expect(report.present.count == 20, "\(share): a fresh cache through B read \(report.present.count) of 20")
    }

    static let bounceShare: [NetworkShare] = available.filter { $0 == .glusterfs }

    @Test("The GlusterFS volume stops for 3 s (both mounts fail) and starts again while writers and a receiver run: all recover, nothing is lost",
          arguments: bounceShare)
    func containerBrieflyAway(share: NetworkShare) async throws {
        let dir = try TemporaryDirectory()
        let (sideA, sideB) = try await Self.container(on: share, in: dir)
        defer { share.down(in: dir.url) }
        let perSender = 300
        let receiver = try Self.receive("receiver", container: sideB, privateDir: dir.path("private-receiver"), expect: 2 * perSender, timeout: 240)
        let senders = [
            try Self.send("sender A", container: sideA, privateDir: dir.path("private-sender-a"), count: perSender, prefix: "a"),
            try Self.send("sender B", container: sideB, privateDir: dir.path("private-sender-b"), count: perSender, prefix: "b"),
        ]
        defer { (senders + [receiver]).forEach { $0.killIfRunning() } }
        _ = await senders[1].waitForLines(50, timeout: .seconds(120))
        let deliveredBefore = Self.received(receiver.lines).count
        try share.bounce(in: dir.url, awayFor: 3)

        for sender in senders {
            let end = try await sender.finish(timeout: .seconds(300))
            #expect(end == .success, "\(share) \(sender.name) ended with \(end): \(sender.errorText) \(sender.lines.suffix(2))")
        }
        let end = try await receiver.finish(timeout: .seconds(300))
        #expect(end == .success, "\(share) receiver ended with \(end): \(receiver.errorText) \(receiver.lines.suffix(2))")
        let expected = Set(["a", "b"].flatMap { p in (0..<perSender).map { "\(p)-\($0)" } })
        let counts = Self.received(receiver.lines)
        #expect(expected.subtracting(counts.keys).isEmpty, "\(share) receiver missed \(expected.subtracting(counts.keys).count)")
        #expect(counts.values.allSatisfy { $0 == 1 }, "\(share) receiver delivered some twice")
        #expect(deliveredBefore < expected.count, "the volume went away before the receiver had everything")
        for (label, side) in [("A", sideA), ("B", sideB)] {
            let report = try await Self.checkUntilComplete(side, expected: expected, share: share) { dir.path("private-check-\(label)-\($0)") }.report
            let difference = Fixture.difference(present: report.present, expected: expected)
            #expect(difference.missing.isEmpty, "\(share) through \(label) misses \(difference.missing.count): \(difference.missing.prefix(10)); \(Self.logScans(side))")
            #expect(difference.extra.isEmpty)
            #expect(report.duplicated.isEmpty)
        }
        print("[figure] \(share) volume stopped for 3 s: the receiver had \(deliveredBefore) of \(expected.count) before; all arrived once after")
    }
}
