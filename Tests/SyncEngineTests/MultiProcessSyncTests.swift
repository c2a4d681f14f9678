import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore

/// The sync engine across real processes: each sender and receiver is a `SyncWorker`
/// with a private database of its own, as separate OS users would have.
@Suite(.startsProcesses, .serialized) struct MultiProcessSyncTests {
    private func worker(_ name: String, _ dir: TemporaryDirectory, _ arguments: [String], mode: JournalMode? = .local,
                        container: URL? = nil) throws -> WorkerProcess {
        try WorkerProcess(name, executable: "SyncWorker", arguments + [
            "--container", (container ?? dir.path("container")).path,
            "--private-data", dir.path("private-\(name)").path,
            "--poll", "0.1",
        ] + (mode.map { ["--mode", $0.rawValue] } ?? []))
    }

    /// Counts how often each name appears in `got NAME` lines.
    private func received(_ lines: [String]) -> [String: Int] {
        lines.filter { $0.hasPrefix("got ") }.reduce(into: [:]) { $0[String($1.dropFirst(4)), default: 0] += 1 }
    }

    @Test(arguments: [JournalMode.local, .network])
    func eightSendersAndEveryReceiverSeesEachMessageOnce(mode: JournalMode) async throws {
        let dir = try TemporaryDirectory()
        _ = try dir.container(mode: mode)
        let senders = 8, perSender = 500
        let total = senders * perSender
        let receivers = try (0..<2).map { try worker("receiver\($0)", dir, ["receive", "--expect", "\(total)", "--timeout", "300"], mode: mode) }
        let started = ContinuousClock.now
        let writers = try (0..<senders).map { try worker("sender\($0)", dir, ["send", "--count", "\(perSender)", "--prefix", "s\($0)"], mode: mode) }
        defer { (writers + receivers).forEach { $0.killIfRunning() } }

        for writer in writers {
            let end = try await writer.finish(timeout: .seconds(300))
            #expect(end == .success, "\(writer.name): \(writer.errorText)")
            #expect(writer.lines.filter { $0.hasPrefix("queued ") }.count == perSender)
        }
        for receiver in receivers {
            let end = try await receiver.finish(timeout: .seconds(300))
            #expect(end == .success, "\(receiver.name): \(receiver.errorText) \(receiver.lines.suffix(3))")
            let counts = received(receiver.lines)
            #expect(counts.count == total, "\(receiver.name) saw \(counts.count) of \(total)")
            #expect(counts.values.allSatisfy { $0 == 1 }, "\(receiver.name) saw some twice")
        }
        let elapsed = ContinuousClock.now - started
        print("[figure] \(mode) mode: \(senders)×\(perSender) messages through the sync engine to 2 receivers in \(elapsed)")
    }

    @Test func sendersKilledAtRandomLoseNothingTheyHadQueued() async throws {
        let dir = try TemporaryDirectory()
        _ = try dir.container()
        let perSender = 200
        var queued = Set<String>()
        for round in 0..<4 {
            let sender = try worker("sender", dir, ["send", "--count", "\(perSender * (round + 1))", "--prefix", "k", "--from", "\(perSender * round)"])
            defer { sender.killIfRunning() }
            _ = await sender.waitForLines(Int.random(in: 20...perSender - 20), timeout: .seconds(60))
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...30)))
            sender.signal(SIGKILL)
            _ = try? await sender.finish(timeout: .seconds(30))
            queued.formUnion(sender.lines.filter { $0.hasPrefix("queued ") }.map { String($0.dropFirst(7)) })
        }
        // A restarted sender (same private database, same outbox) sends what was left.
        let resumed = try worker("sender", dir, ["send", "--count", "0"])
        let end = try await resumed.finish(timeout: .seconds(120))
        #expect(end == .success, "\(resumed.errorText)")

        let public_ = try dir.container(user: "checker").publicDatabase
        let changes = try public_.fetchChanges(since: nil, limit: 100_000).changes
        let writes = changes.reduce(into: [String: Int]()) { $0[$1.recordID.recordName, default: 0] += 1 }
        for name in queued {
            #expect(writes[name] == 1, "\(name) was written \(writes[name] ?? 0) times")
        }
        #expect(queued.count > 40)
        let receiver = try worker("receiver", dir, ["receive", "--expect", "\(writes.count)", "--timeout", "60"])
        _ = try await receiver.finish(timeout: .seconds(90))
        let counts = received(receiver.lines)
        #expect(queued.isSubset(of: Set(counts.keys)))
        #expect(counts.values.allSatisfy { $0 == 1 })
    }

    @Test func sendsQueueWhileTheContainerIsAwayAndArriveWhenItIsBack() async throws {
        let dir = try TemporaryDirectory()
        _ = try dir.container()
        let receiver = try worker("receiver", dir, ["receive", "--expect", "300", "--timeout", "120"])
        let sender = try worker("sender", dir, ["send", "--count", "300", "--prefix", "away"])
        defer { [receiver, sender].forEach { $0.killIfRunning() } }
        _ = await sender.waitForLines(50, timeout: .seconds(60))
        let away = dir.path("container-away")
        try FileManager.default.moveItem(at: dir.path("container"), to: away)
        let queuedBeforeAway = sender.lines.count
        try await Task.sleep(for: .seconds(2))
        // Waited for, not judged after the sleep alone: on a loaded machine the next line can take a while.
        _ = await sender.waitForLines(min(queuedBeforeAway + 1, 300), timeout: .seconds(30))
        let queuedWhileAway = sender.lines.count
        try await Task.sleep(for: .seconds(1))
        try FileManager.default.moveItem(at: away, to: dir.path("container"))

        #expect(try await sender.finish(timeout: .seconds(120)) == .success, "\(sender.errorText)")
        #expect(try await receiver.finish(timeout: .seconds(120)) == .success, "\(receiver.errorText)")
        let counts = received(receiver.lines)
        #expect(counts.count == 300)
        #expect(counts.values.allSatisfy { $0 == 1 })
        // A test task that woke late may find all 300 queued before the move: nothing to judge then.
        #expect(queuedWhileAway > queuedBeforeAway || queuedBeforeAway == 300,
                "the sender kept accepting messages into its outbox while the container was away")
    }

    @Test("Network mode across two bindfs mounts: 2 senders per mount × 300, every receiver sees all 1200 once",
          .enabled("needs FUSE: /dev/fuse, sshfs, openssh-server, bindfs, fuse3") { FuseMounts.isAvailable() })
    func sendersOnTwoFuseMountsLoseNothing() async throws {
        let dir = try TemporaryDirectory()
        let mounts = try await FuseMounts.up(in: dir.url)
        defer { FuseMounts.down(in: dir.url) }
        // Two bindfs mounts: each keeps its own page cache. (Over sshfs the kernel's cached
        // directory entries make the lock look taken for seconds, and engines starve; see README.)
        let sides = [mounts.appendingPathComponent("bindfs-a/chat"), mounts.appendingPathComponent("bindfs-b/chat")]
        #expect(JournalMode.detect(for: sides[0].deletingLastPathComponent()) == .network)
        // Made once, as `fatchat init` would; detection, not an override, must choose network mode.
        let made = try Container(url: sides[0], options: Container.Options(privateDataDirectory: dir.path("private-init")))
        #expect(made.mode == .network)

        let perSender = 300, total = 4 * perSender
        let receivers = try sides.enumerated().map { index, side in
            try worker("receiver\(index)", dir, ["receive", "--expect", "\(total)", "--timeout", "600"], mode: nil, container: side)
        }
        let started = ContinuousClock.now
        var senders: [WorkerProcess] = []
        for (index, side) in sides.enumerated() {
            for n in 0..<2 {
                senders.append(try worker("sender\(index)\(n)", dir, ["send", "--count", "\(perSender)", "--prefix", "f\(index)\(n)", "--drain-timeout", "600"],
                                          mode: nil, container: side))
            }
        }
        defer { (senders + receivers).forEach { $0.killIfRunning() } }
        for sender in senders {
            #expect(try await sender.finish(timeout: .seconds(900)) == .success, "\(sender.name): \(sender.errorText)")
        }
        for receiver in receivers {
            #expect(try await receiver.finish(timeout: .seconds(900)) == .success, "\(receiver.name): \(receiver.errorText)")
            let counts = received(receiver.lines)
            #expect(counts.count == total, "\(receiver.name) saw \(counts.count) of \(total)")
            #expect(counts.values.allSatisfy { $0 == 1 }, "\(receiver.name) saw some twice")
        }
        print("[figure] FUSE bindfs + bindfs: 4×\(perSender) messages through the sync engine to 2 receivers in \(ContinuousClock.now - started)")
    }
}
