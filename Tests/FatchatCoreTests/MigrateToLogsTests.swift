import Foundation
import ProcessTestKit
import Testing

/// `fatchat admin migrate-to-logs`, with real OS users, the real `fatchat` and real files: a network-mode
/// single-file container becomes a log container with every record, creator, date and change tag kept.
@Suite(.startsProcesses, .serialized, .enabled(if: OSUsers.available && HeldLock.available, "needs root, to make OS users, and sqlite3"))
struct MigrateToLogsTests {
    static let alice = "fatchat-test-mga"
    static let bob = "fatchat-test-mgb"
    static let group = "fatchat-test-mg"
    /// The container is made in network mode on a local disk, so every command names the mode.
    static let mode = ["--fs-mode", "network"]

    @Test func everyRecordMovesOnceWithItsCreatorAndPostingGoesOn() async throws {
        let (root, container) = try await GroupContainer.make(users: [Self.alice, Self.bob], group: Self.group, arguments: Self.mode)
        defer { try? FileManager.default.removeItem(at: root) }
        try await post("alice before", as: Self.alice, in: container)
        try await post("bob before", as: Self.bob, in: container)
        let file = root.appendingPathComponent("photo.txt")
        try Data("an attachment".utf8).write(to: file)
        chmod(file.path, 0o644)
        let attach = try await run(Self.bob, ["bot", "--container", container, "--join", "general"] + Self.mode,
                                   input: "/attach \(file.path)\n")
        #expect(attach.termination == .success, "\(attach.errorText)")
        let before = try records(container + "/public.sqlite")
        #expect(before.count >= 6, "\(before)")
        let hashes = try FileManager.default.contentsOfDirectory(atPath: container + "/assets").filter { !$0.hasPrefix(".") }
        #expect(hashes.count == 1)
        // Joining a channel saved a subscription for each of them.
        let subscriptions = try SQLiteCLI.run(container + "/public.sqlite", "SELECT owner || ' ' || id FROM subscription ORDER BY owner, id;")
            .split(separator: "\n").map(String.init)
        let aliceAccount = try Self.account(Self.alice)
        let bobAccount = try Self.account(Self.bob)
        #expect(subscriptions.contains { $0.hasPrefix(aliceAccount + " ") } && subscriptions.contains { $0.hasPrefix(bobAccount + " ") },
                "\(subscriptions)")

        // A member may not write logs in others' names: with bob's records in it, alice is told to run it as root.
        let refused = try await run(Self.alice, ["admin", "migrate-to-logs", container])
        #expect(refused.termination != .success && refused.errorText.contains("as root"), "\(refused.errorText)")
        #expect(try String(contentsOfFile: container + "/container.json", encoding: .utf8).contains("\"sqlite\""))

        let migrate = try await run("root", ["admin", "migrate-to-logs", container])
        #expect(migrate.termination == .success, "\(migrate.errorText)")
        #expect(migrate.errorText.contains("records into their creators' logs\n"), "progress lines on stderr, plain when it is not a terminal: \(migrate.errorText)")
        #expect(!migrate.errorText.contains("\r"), "a carriage return in plain progress: \(migrate.errorText)")
        #expect(migrate.lines.contains { $0.hasSuffix("and \(subscriptions.count) subscriptions.") }, "\(migrate.lines)")
        let descriptor = try String(contentsOfFile: container + "/container.json", encoding: .utf8)
        #expect(descriptor.contains("\"engine\" : \"log\""), "\(descriptor)")
        #expect(FileManager.default.fileExists(atPath: container + "/public.sqlite.migrated"))
        #expect(!FileManager.default.fileExists(atPath: container + "/public.sqlite"))

        // A reader with a cache of its own sees exactly the records that were in the file, system fields and all.
        let reader = root.appendingPathComponent("reader")
        let read = try await run("root", ["read", "--container", container, "general", "--last", "50"] + Self.mode,
                                 environment: ["XDG_DATA_HOME": reader.path])
        #expect(read.termination == .success, "\(read.errorText)")
        for line in ["alice before", "bob before"] {
            #expect(read.lines.filter { $0.hasSuffix(line) }.count == 1, "\(line) in \(read.lines)")
        }
        #expect(read.lines.contains { $0.contains(Self.alice) && $0.hasSuffix("alice before") }, "sender label: \(read.lines)")
        let caches = try FileManager.default.subpathsOfDirectory(atPath: reader.path).filter { $0.hasSuffix("log-cache.sqlite") }
        let cache = try #require(caches.first.map { reader.path + "/" + $0 })
        #expect(try records(cache) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: container + "/assets").filter { !$0.hasPrefix(".") } == hashes)

        // alice's first client on the log container takes her subscriptions into its cache, and only hers.
        let home = "/home/\(Self.alice)"
        let cachesBefore = Set(Self.caches(under: home))
        let aliceRead = try await run(Self.alice, ["read", "--container", container, "general", "--last", "5"] + Self.mode)
        #expect(aliceRead.termination == .success, "\(aliceRead.errorText)")
        let aliceCache = try #require(Set(Self.caches(under: home)).subtracting(cachesBefore).first)
        let taken = try SQLiteCLI.run(aliceCache, "SELECT owner || ' ' || id FROM subscription ORDER BY owner, id;").split(separator: "\n").map(String.init)
        #expect(!taken.isEmpty && taken == subscriptions.filter { $0.hasPrefix(aliceAccount + " ") }, "\(taken)")

        // Each account's records are in a log that account owns.
        for user in [Self.alice, Self.bob] {
            let uid = try #require(OSUsers.ids(of: user)).uid
            let folder = "\(container)/logs/_\(uid)_\(user)"
            var info = stat()
            #expect(stat(folder, &info) == 0 && info.st_uid == uid, "\(folder)")
        }

        // Both go on posting, now through their own logs.
        try await post("alice after", as: Self.alice, in: container)
        try await post("bob after", as: Self.bob, in: container)
        // A reader with a new cache: `read` on a cache that exists already does not poll the logs first.
        let again = try await run("root", ["read", "--container", container, "general", "--last", "50"] + Self.mode,
                                  environment: ["XDG_DATA_HOME": root.appendingPathComponent("reader2").path])
        for line in ["alice before", "bob before", "alice after", "bob after"] {
            #expect(again.lines.filter { $0.hasSuffix(line) }.count == 1, "\(line) in \(again.lines); \(again.errorText)")
        }
    }

    @Test func aMigrationCutShortLeavesTheContainerAsItWasAndCanRunAgain() async throws {
        let (root, container) = try await GroupContainer.make(users: [Self.alice, Self.bob], group: Self.group, arguments: Self.mode)
        defer { try? FileManager.default.removeItem(at: root) }
        try await post("first", as: Self.alice, in: container)
        // Held up by someone else's write lock, the migration is killed before it gets anywhere.
        let lock = try await HeldLock(path: container + "/public.sqlite", vfs: "unix-dotfile")
        let migrate = try WorkerProcess("migrate", executable: "fatchat", ["admin", "migrate-to-logs", container])
        try await Task.sleep(for: .seconds(2))
        migrate.signal(SIGKILL)
        _ = try await migrate.finish(timeout: .seconds(30))
        lock.release()
        let descriptor = try String(contentsOfFile: container + "/container.json", encoding: .utf8)
        #expect(descriptor.contains("\"sqlite\"") || !descriptor.contains("\"log\""), "\(descriptor)")
        try await post("second", as: Self.bob, in: container)

        let rerun = try await run("root", ["admin", "migrate-to-logs", container])
        #expect(rerun.termination == .success, "\(rerun.errorText)")
        // A second run over the logs of the first replaces them: still one of each.
        let read = try await run("root", ["read", "--container", container, "general", "--last", "50"] + Self.mode,
                                 environment: ["XDG_DATA_HOME": root.appendingPathComponent("reader").path])
        for line in ["first", "second"] {
            #expect(read.lines.filter { $0.hasSuffix(line) }.count == 1, "\(line) in \(read.lines); \(read.errorText)")
        }
        let third = try await run("root", ["admin", "migrate-to-logs", container])
        #expect(third.termination != .success && third.errorText.contains("log engine already"), "\(third.errorText)")
    }

    private static func account(_ user: String) throws -> String {
        "_\(try #require(OSUsers.ids(of: user)).uid)_\(user)"
    }

    /// The log engine's caches in a user's data directories.
    private static func caches(under home: String) -> [String] {
        ((try? FileManager.default.subpathsOfDirectory(atPath: home)) ?? []).filter { $0.hasSuffix("log-cache.sqlite") }.map { home + "/" + $0 }
    }

    private func post(_ text: String, as user: String, in container: String) async throws {
        let post = try await run(user, ["post", "--container", container] + Self.mode + ["general", text])
        #expect(post.termination == .success, "\(user): \(post.errorText)")
    }

    private struct Finished {
        var termination: WorkerProcess.Termination
        var lines: [String]
        var errorText: String
    }

    private func run(_ user: String, _ arguments: [String], input: String? = nil, environment: [String: String] = [:]) async throws -> Finished {
        let process = try WorkerProcess("\(user) \(arguments.first ?? "")", executable: "fatchat", arguments,
                                        launcher: user == "root" ? [] : OSUsers.launcher(for: user), environment: environment,
                                        input: try input.map(WorkerProcess.input))
        let termination = try await process.finish(timeout: .seconds(120))
        return Finished(termination: termination, lines: process.lines, errorText: process.errorText)
    }

    /// Every record's name, creator, dates and change tag, read with sqlite3, sorted.
    private func records(_ path: String) throws -> [String] {
        let text = try spawn(["/usr/bin/sqlite3", "-readonly", path, "SELECT name, type, creator, created, modified, tag, fields FROM record ORDER BY name"],
                             capturing: true)
        return text.split(separator: "\n").map(String.init)
    }
}
