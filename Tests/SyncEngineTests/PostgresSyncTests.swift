import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore

/// The sync engine on the `postgresql` engine, across real processes: LISTEN/NOTIFY wakes the receivers, the outbox rides out a dead server.
@Suite(.startsProcesses, .serialized, .enabled(if: PostgresCluster.shouldRun, "\(PostgresCluster.unavailableReason ?? "")"))
struct PostgresSyncTests {
    private func worker(_ name: String, _ dir: TemporaryDirectory, _ arguments: [String]) throws -> WorkerProcess {
        try WorkerProcess(name, executable: "SyncWorker", arguments + [
            "--container", dir.path("container").path,
            "--private-data", dir.path("private-\(name)").path,
        ])
    }

    /// Makes a postgresql container in `dir` on `url`.
    private func makeContainer(_ dir: TemporaryDirectory, url: String) throws {
        var options = Container.Options(privateDataDirectory: dir.path("private-init"))
        options.engine = .postgresql
        options.postgresURL = url
        _ = try Container.create(at: dir.path("container"), access: .umask, options: options)
    }

    private func received(_ lines: [String]) -> [String: Int] {
        lines.filter { $0.hasPrefix("got ") }.reduce(into: [:]) { $0[String($1.dropFirst(4)), default: 0] += 1 }
    }

    @Test("8 senders × 500 through PostgreSQL: each of 2 receivers gets every message exactly once")
    func eightSendersTwoReceivers() async throws {
        let dir = try TemporaryDirectory()
        try makeContainer(dir, url: try PostgresCluster.shared().makeDatabase())
        let senders = 8, perSender = 500, total = senders * perSender
        let receivers = try (0..<2).map { try worker("receiver\($0)", dir, ["receive", "--expect", "\(total)", "--timeout", "300"]) }
        let started = ContinuousClock.now
        let writers = try (0..<senders).map { try worker("sender\($0)", dir, ["send", "--count", "\(perSender)", "--prefix", "s\($0)", "--drain-timeout", "300"]) }
        defer { (writers + receivers).forEach { $0.killIfRunning() } }
        for writer in writers {
            #expect(try await writer.finish(timeout: .seconds(300)) == .success, "\(writer.name): \(writer.errorText)")
        }
        for receiver in receivers {
            #expect(try await receiver.finish(timeout: .seconds(300)) == .success, "\(receiver.name): \(receiver.errorText) \(receiver.lines.suffix(3))")
            let counts = received(receiver.lines)
            #expect(counts.count == total, "\(receiver.name) saw \(counts.count) of \(total)")
            #expect(counts.values.allSatisfy { $0 == 1 }, "\(receiver.name) saw some twice")
        }
        print("[figure] postgresql: \(senders)×\(perSender) messages through the sync engine to 2 receivers in \(ContinuousClock.now - started)")
    }

    @Test("Killing the server mid-run and starting it again loses nothing and delivers nothing twice")
    func serverKilledAndRestartedLosesNothing() async throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        try cluster.createRole("root")
        let dir = try TemporaryDirectory()
        try makeContainer(dir, url: cluster.url)
        let perSender = 300, total = 2 * perSender
        let receiver = try worker("receiver", dir, ["receive", "--expect", "\(total)", "--timeout", "180"])
        let senders = try (0..<2).map { try worker("sender\($0)", dir, ["send", "--count", "\(perSender)", "--prefix", "k\($0)", "--drain-timeout", "180"]) }
        defer { (senders + [receiver]).forEach { $0.killIfRunning() } }

        _ = await receiver.waitForLines(20, timeout: .seconds(60))
        try cluster.kill()
        let linesWhenKilled = senders.map(\.lines.count)
        try await Task.sleep(for: .seconds(2))
        // The senders kept queueing into their outboxes while the server was gone. Waited for, not
        // judged after the sleep alone: on a loaded machine the next line can take a while.
        func keptQueueing() -> Bool {
            zip(senders.map(\.lines.count), linesWhenKilled).contains { $0 > $1 } || senders.allSatisfy { $0.lines.count >= perSender }
        }
        #expect(await waitUntil(timeout: .seconds(30), keptQueueing))
        try cluster.start()

        for sender in senders {
            #expect(try await sender.finish(timeout: .seconds(180)) == .success, "\(sender.name): \(sender.errorText)")
        }
        #expect(try await receiver.finish(timeout: .seconds(180)) == .success, "\(receiver.errorText) \(receiver.lines.suffix(3))")
        let counts = received(receiver.lines)
        #expect(counts.count == total, "the receiver saw \(counts.count) of \(total)")
        #expect(counts.values.allSatisfy { $0 == 1 }, "the receiver saw some twice")
        let stored = try cluster.psql("SELECT count(*), count(DISTINCT name) FROM fatchat.change WHERE type = 'Message'", as: "root")
        #expect(stored == "\(total)|\(total)", "each message was written once: \(stored)")
    }
}
