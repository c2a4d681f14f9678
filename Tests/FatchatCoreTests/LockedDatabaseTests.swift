import Foundation
import ProcessTestKit
import Testing

/// Another process sits in `BEGIN EXCLUSIVE` on the public database: `post` keeps its word, and loses nothing.
@Suite(.startsProcesses, .serialized, .enabled(if: HeldLock.available, "needs the sqlite3 command"))
struct LockedDatabaseTests {
    /// A container made by `fatchat init`, and a data directory of its own for the private databases.
    final class Sandbox {
        let root: URL
        let container: String
        var data: String { root.appendingPathComponent("data").path }
        var publicFile: String { container + "/public.sqlite" }

        init() async throws {
            root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("fatchat-locked-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            container = root.appendingPathComponent("chat").path
            let made = try WorkerProcess("init", executable: "fatchat", ["init", container])
            #expect(try await made.finish(timeout: .seconds(60)) == .success, "\(made.errorText)")
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        /// Starts `fatchat COMMAND --container … ARGS`.
        func start(_ command: String, _ arguments: [String]) throws -> WorkerProcess {
            try WorkerProcess(command, executable: "fatchat", [command, "--container", container] + arguments,
                              environment: ["XDG_DATA_HOME": data])
        }

        /// Runs `fatchat COMMAND …` to its end; a generous bound guards against a hang.
        func run(_ command: String, _ arguments: [String]) async throws -> (WorkerProcess, WorkerProcess.Termination) {
            let process = try start(command, arguments)
            return (process, try await process.finish(timeout: .seconds(90)))
        }

        /// The texts `read` prints for a channel, oldest first.
        func texts(_ channel: String) async throws -> [String] {
            let (read, _) = try await run("read", [channel, "--json", "--last", "100"])
            return read.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.compactMap { $0["text"] as? String }
        }

        /// Whether this user's outbox holds a message with `text`, read from the private database file itself.
        func outboxHolds(_ text: String) throws -> Bool {
            let base = URL(fileURLWithPath: data).appendingPathComponent("fatchat")
            let directories = (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? []
            return try directories.contains { directory in
                let file = base.appendingPathComponent(directory).appendingPathComponent("private.sqlite").path
                guard FileManager.default.fileExists(atPath: file) else { return false }
                return try Self.count(in: file, zone: "fatchatOutbox", holding: text) > 0
            }
        }

        /// Whether the public database holds a message with `text`, read with `sqlite3`, which a write lock does not hold up.
        func publicHolds(_ text: String) throws -> Bool {
            try Self.count(in: publicFile, zone: "_defaultZone", holding: text) > 0
        }

        private static func count(in file: String, zone: String, holding text: String) throws -> Int {
            let answer = try spawn(["/usr/bin/sqlite3", "-cmd", ".timeout 2000", file,
                                    "SELECT count(*) FROM record WHERE zone = '\(zone)' AND instr(fields, '\(text)') > 0"], capturing: true)
            return Int(answer.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
    }

    @Test func postUnderALockReturnsAtItsTimeoutStillQueuedAndTheLineGoesOutLater() async throws {
        let sandbox = try await Sandbox()
        let (first, firstEnd) = try await sandbox.run("post", ["general", "before the lock"])
        #expect(firstEnd == .success, "\(first.errorText)")

        let lock = try await HeldLock(path: sandbox.publicFile)
        let (held, heldEnd) = try await sandbox.run("post", ["--timeout", "3", "general", "held up"])
        #expect(heldEnd == WorkerProcess.Termination(status: 3, signaled: false), "\(held.errorText)")
        #expect(held.errorText.contains("stays queued"), "\(held.errorText)")
        #expect(try sandbox.outboxHolds("held up"))
        // The verdict was true: it had not gone out.
        #expect(try !sandbox.publicHolds("held up"))
        #expect(try sandbox.publicHolds("before the lock"))

        lock.release()
        let (later, laterEnd) = try await sandbox.run("post", ["--timeout", "60", "general", "after the lock"])
        #expect(laterEnd == .success, "\(later.errorText)")
        #expect(try await sandbox.texts("general") == ["before the lock", "held up", "after the lock"])
        #expect(try !sandbox.outboxHolds("held up"))
    }

    @Test func aPostKilledWhileTheLockHoldsItUpLosesNothingEvenOnANewContainer() async throws {
        let sandbox = try await Sandbox()
        // Nothing was ever posted here: the channel, the index marks and the membership are all still to be written.
        let lock = try await HeldLock(path: sandbox.publicFile)
        let blocked = try sandbox.start("post", ["--timeout", "600", "general", "typed under the lock"])
        defer { blocked.killIfRunning() }
        let deadline = ContinuousClock.now + .seconds(60)
        while try !sandbox.outboxHolds("typed under the lock"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(try sandbox.outboxHolds("typed under the lock"), "the line is queued while the lock is held: \(blocked.errorText)")
        blocked.signal(SIGKILL)
        _ = try? await blocked.finish(timeout: .seconds(30))

        lock.release()
        let (next, nextEnd) = try await sandbox.run("post", ["--timeout", "60", "general", "the next run"])
        #expect(nextEnd == .success, "\(next.errorText)")
        #expect(try await sandbox.texts("general") == ["typed under the lock", "the next run"])
    }
}
