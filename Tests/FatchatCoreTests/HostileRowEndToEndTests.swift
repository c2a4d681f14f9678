import Foundation
import ProcessTestKit
import Testing

/// Mallory, a real member of the group, writes `public.sqlite` with `sqlite3` while Alice chats.
@Suite(.startsProcesses, .serialized, .enabled(if: OSUsers.available, "needs root to create the OS users fcrowalice and fcrowmallory"))
struct HostileRowEndToEndTests {
    static let alice = "fcrowalice"
    static let mallory = "fcrowmallory"
    static let group = "fcrowgroup"

    /// A container made by `fatchat init --group` in a fresh directory, and its public database's path.
    private func sharedContainer() async throws -> (root: URL, container: String, database: String) {
        try OSUsers.ensure(users: [Self.alice, Self.mallory], group: Self.group)
        let root = URL(fileURLWithPath: "/tmp/fatchat-rows-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let container = root.appendingPathComponent("chat").path
        let made = try WorkerProcess("init", executable: "fatchat", ["init", container, "--group", Self.group])
        #expect(try await made.finish(timeout: .seconds(60)) == .success, "\(made.errorText)")
        return (root, container, container + "/public.sqlite")
    }

    @discardableResult
    private func fatchat(_ user: String, _ arguments: [String]) async throws -> (WorkerProcess, WorkerProcess.Termination) {
        let process = try WorkerProcess("\(user) \(arguments.first ?? "")", executable: "fatchat", arguments, launcher: OSUsers.launcher(for: user))
        return (process, try await process.finish(timeout: .seconds(120)))
    }

    private func objects(_ process: WorkerProcess) -> [[String: Any]] {
        process.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Mallory's writes, as her own OS user.
    private func plant(_ database: String, _ sql: String) throws {
        try SQLiteCLI.run(database, sql, launcher: OSUsers.launcher(for: Self.mallory))
    }

    @Test func garbageRowsNeitherStallNorMultiplyAliceSBot() async throws {
        let (root, container, database) = try await sharedContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        try await fatchat(Self.alice, ["post", "--container", container, "general", "hello"])

        let input = Pipe()
        let bot = try WorkerProcess("alice bot", executable: "fatchat", ["bot", "--container", container, "--json", "--join", "general"],
                                    launcher: OSUsers.launcher(for: Self.alice), input: input.fileHandleForReading)
        defer { bot.killIfRunning() }
        #expect(await bot.waitForLines(1, timeout: .seconds(30)), "alice's bot started: \(bot.errorText)")

        try plant(database, """
            BEGIN;
            INSERT INTO subscription (owner, id, body) SELECT owner, 'zz-garbage', 'garbage{{' FROM subscription WHERE id = 'messages.general';
            INSERT INTO subscription (owner, id, body) SELECT owner, 'zz-copy', body FROM subscription WHERE id = 'messages.general';
            INSERT INTO subscription (owner, id, body) SELECT owner, 'messages.twin', json_set(body, '$.id', 'messages.twin')
                FROM subscription WHERE id = 'messages.general';
            INSERT INTO change (zone, name, type, kind, previous, at) VALUES ('_defaultZone', 'ghost', 'Message', 1, 'garbage{{', 0);
            INSERT INTO record (zone, name, type, fields, created, modified, creator, modifier, tag)
                VALUES ('_defaultZone', 'emptied', 'Message', '[]', 0, 0, 'mallory', 'mallory', 't'),
                       ('_defaultZone', 'textdate', 'Message', '{}', 'yesterday', 0, 'mallory', 'mallory', 't');
            INSERT INTO change (zone, name, type, kind, previous, at) VALUES ('_defaultZone', 'emptied', 'Message', 0, NULL, 0),
                                                                            ('_defaultZone', 'textdate', 'Message', 0, NULL, 0);
            UPDATE field_mark SET options = 'x'; -- a client that starts later marks its fields again, without trapping first
            COMMIT;
            """)
        try await fatchat(Self.mallory, ["post", "--container", container, "general", "after the garbage"])
        try await fatchat(Self.mallory, ["post", "--container", container, "general", "sentinel"])

        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, !objects(bot).contains(where: { $0["type"] as? String == "message" && $0["text"] as? String == "sentinel" }) {
            try await Task.sleep(for: .milliseconds(100))
        }
        try input.fileHandleForWriting.close()
        _ = try await bot.finish(timeout: .seconds(60))
        let messages = objects(bot).filter { $0["type"] as? String == "message" }.compactMap { $0["text"] as? String }
        #expect(messages.filter { $0 == "after the garbage" }.count == 1, "\(messages)")
        #expect(messages.filter { $0 == "sentinel" }.count == 1, "\(messages)")
        let alerts = objects(bot).filter { $0["type"] as? String == "notification" }.compactMap { $0["text"] as? String }
        #expect(alerts.filter { $0.contains("after the garbage") }.count == 1, "\(alerts)")
        #expect(bot.errorText.contains("skipped the"), "the damage was logged: \(bot.errorText)")

        // A client started after the garbage starts, and reads the good messages.
        let (read, readEnd) = try await fatchat(Self.alice, ["read", "--container", container, "general", "--json"])
        #expect(readEnd == .success, "\(read.errorText)")
        #expect(objects(read).compactMap { $0["text"] as? String } == ["hello", "after the garbage", "sentinel"])

        let (check, checkEnd) = try await fatchat(Self.alice, ["admin", "check", "--container", container])
        #expect(checkEnd == WorkerProcess.Termination(status: 1, signaled: false), "\(check.lines) \(check.errorText)")
        for row in ["change row sequence", "record row emptied", "record row textdate", "zz-garbage", "zz-copy"] {
            #expect(check.lines.contains { $0.hasPrefix("damaged row:") && $0.contains(row) }, "\(row) in \(check.lines)")
        }
    }

    @Test func aPlantedTriggerIsRefusedByNameAndNeverRuns() async throws {
        let (root, container, database) = try await sharedContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        try await fatchat(Self.alice, ["post", "--container", container, "general", "before"])
        try plant(database, """
            CREATE TRIGGER mallory_rewrites AFTER INSERT ON record
            BEGIN UPDATE record SET fields = json_set(fields, '$.text.v', 'mallory was here') WHERE id = new.id; END;
            """)

        let (post, postEnd) = try await fatchat(Self.alice, ["post", "--container", container, "general", "after"])
        #expect(postEnd != .success)
        #expect(post.errorText.contains("trigger 'mallory_rewrites'"), "\(post.errorText)")

        let (check, checkEnd) = try await fatchat(Self.alice, ["admin", "check", "--container", container])
        #expect(checkEnd == WorkerProcess.Termination(status: 1, signaled: false))
        #expect(check.lines.contains { $0.hasPrefix("schema:") && $0.contains("trigger 'mallory_rewrites'") }, "\(check.lines) \(check.errorText)")

        // Once Mallory's trigger is gone, Alice posts again, and nothing of hers was rewritten.
        try plant(database, "DROP TRIGGER mallory_rewrites")
        let (clean, cleanEnd) = try await fatchat(Self.alice, ["admin", "check", "--container", container])
        #expect(cleanEnd == .success && clean.lines == ["ok"], "\(clean.lines)")
        try await fatchat(Self.alice, ["post", "--container", container, "general", "later"])
        let (read, _) = try await fatchat(Self.alice, ["read", "--container", container, "general", "--json"])
        let texts = objects(read).compactMap { $0["text"] as? String }
        #expect(texts.first == "before" && texts.last == "later" && !texts.contains("mallory was here"), "\(texts)")
    }
}
