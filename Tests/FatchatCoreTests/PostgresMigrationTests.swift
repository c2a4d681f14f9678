import Foundation
import ProcessTestKit
import Testing

/// `fatchat admin migrate DIR --to URL` on real `sqlite` and `log` containers, real OS users and a real server:
/// every record arrives as it was, signatures still verify, another client reads the history from the server,
/// and the server's rules hold for the migrated rows.
@Suite(.startsProcesses, .serialized, .enabled(if: PostgresCluster.shouldRun, "\(PostgresCluster.unavailableReason ?? "")"))
struct PostgresMigrationTests {
    static let alice = "fatchat-test-pma"
    static let bob = "fatchat-test-pmb"
    static let group = "fatchat-test-pm"
    static let types = ["Channel", "Message", "Membership", "User"]

    @Test(arguments: ["sqlite", "log"])
    func aContainerMovesToTheServerLosingNothing(engine: String) async throws {
        let (root, container) = try await GroupContainer.make(users: [Self.alice, Self.bob], group: Self.group, arguments: ["--engine", engine])
        defer { try? FileManager.default.removeItem(at: root) }
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        for role in ["root", Self.alice, Self.bob] { try cluster.createRole(role) }

        for (user, text) in [(Self.alice, "deploy at noon"), (Self.bob, "bob here"), (Self.alice, "lunch is on me")] {
            let post = try await run(as: user, ["post", "--container", container, "general", text])
            #expect(post.succeeded, "\(user): \(post.errorText)")
        }
        // An attachment, so an asset travels too.
        let file = root.appendingPathComponent("notes.txt")
        try Data("the agenda\n".utf8).write(to: file)
        chmod(file.path, 0o644)
        let attach = try await GroupContainer.bot(Self.bob, container, [#"{"cmd":"join","channel":"general"}"#, #"{"cmd":"attach","path":"\#(file.path)","channel":"general"}"#])
        #expect(!attach.lines.contains { $0.contains("\"error\"") }, "\(attach.lines) \(attach.errorText)")

        let before = try await snapshot(container)
        #expect(before.filter { $0["recordType"] as? String == "Message" }.count == 4, "\(before)")
        let exactBefore = engine == "sqlite" ? try sqliteRows(container + "/public.sqlite") : []

        // A bad URL and a server that does not answer: clear errors, and the container is as it was.
        let badURL = try await asRoot(["admin", "migrate", container, "--to", "http://example.org/chat"])
        #expect(badURL.failed && badURL.errorText.contains("not a PostgreSQL URL"), "\(badURL.errorText)")
        let down = try await asRoot(["admin", "migrate", container, "--to", "postgresql:///fatchat?host=\(root.path)&port=1"])
        #expect(down.failed && down.errorText.contains("Nothing was migrated"), "\(down.errorText)")
        #expect(try descriptor(container)["engine"] as? String == engine)

        let migrated = try await asRoot(["admin", "migrate", container, "--to", cluster.url])
        #expect(migrated.succeeded, "\(migrated.errorText)")
        #expect(migrated.lines.contains { $0.hasPrefix("Migrated ") && $0.contains("3 keys") }, "\(migrated.lines)")
        let switched = try descriptor(container)
        #expect(switched["engine"] as? String == "postgresql" && switched["postgresURL"] as? String == cluster.url, "\(switched)")
        // The check reads the server's rows now, not the file kept as a backup: every record decodes and verifies.
        let check = try await asRoot(["admin", "check", "--container", container])
        #expect(check.succeeded && check.lines == ["ok"], "\(check.lines) \(check.errorText)")

        // A run that ended after the server's commit but before container.json was switched can be run again: the copy is made anew, once.
        if engine == "log" {
            let copied = try cluster.psql("SELECT count(*) || ' ' || count(DISTINCT name) FROM fatchat.record")
            try setDescriptor(container, engine: engine)
            let rerun = try await asRoot(["admin", "migrate", container, "--to", cluster.url])
            #expect(rerun.succeeded, "\(rerun.errorText)")
            #expect(try await snapshot(container).count == before.count)
            #expect(try cluster.psql("SELECT count(*) || ' ' || count(DISTINCT name) FROM fatchat.record") == copied)
        }

        // Every record, as it was: name, type, creator, dates (to the second here, to the millisecond below), change tag, fields.
        let after = try await snapshot(container)
        #expect(after.count == before.count)
        #expect(NSArray(array: after).isEqual(to: before), "before: \(before)\nafter: \(after)")
        if engine == "sqlite" {
            #expect(!FileManager.default.fileExists(atPath: container + "/public.sqlite"))
            let exactAfter = try cluster.psql("""
                SELECT string_agg(name || '|' || type || '|' || creator || '|' || modifier || '|' || round(created * 1000)::bigint || '|' || round(modified * 1000)::bigint || '|' || tag, E'\\n' ORDER BY name) FROM fatchat.record
                """)
            #expect(exactAfter.split(separator: "\n").map(String.init) == exactBefore)
        }
        #expect(try cluster.psql("SELECT count(*) FROM fatchat.asset") == "1")
        #expect(try cluster.psql("SELECT count(*) FROM fatchat.record WHERE type = 'Message' AND owner = '\(Self.alice)'") == "2")

        // Bob's client reads the history from the server, every line still signed by its writer, the attachment with it.
        let read = try await run(as: Self.bob, ["read", "--container", container, "general", "--json"])
        #expect(read.succeeded, "\(read.errorText)")
        let messages = SharedContainerFixture.objects(read.process).filter { $0["type"] as? String == "message" }
        #expect(messages.compactMap { $0["text"] as? String }.prefix(3) == ["deploy at noon", "bob here", "lunch is on me"], "\(read.lines)")
        #expect(messages.count == 4 && messages.allSatisfy { ($0["verified"] as? Bool) != false }, "\(read.lines)")
        #expect(messages.contains { $0["attachment"] != nil }, "\(read.lines)")
        let saved = "/tmp/fatchat-pm-saved-\(UUID().uuidString).txt"
        defer { unlink(saved) }
        let attachmentID = try #require(messages.first { $0["attachment"] != nil }?["id"] as? String)
        let save = try await GroupContainer.bot(Self.alice, container, [#"{"cmd":"join","channel":"general"}"#, #"{"cmd":"save","id":"\#(attachmentID)","path":"\#(saved)"}"#])
        #expect((try? String(contentsOfFile: saved, encoding: .utf8)) == "the agenda\n", "\(save.lines) \(save.errorText)")

        // After the migration, one OS user still cannot change another's record, and a new post goes through the server.
        let rewritten = try cluster.psql("WITH done AS (UPDATE fatchat.record SET tag = 'x' WHERE owner = '\(Self.alice)' RETURNING 1) SELECT count(*) FROM done", as: Self.bob)
        #expect(rewritten == "0")
        // Nor can a member borrow the migration's exception: `fatchat.migrating` counts for the administrator only.
        let aliceAccount = "_\(OSUsers.ids(of: Self.alice)?.uid ?? 0)_\(Self.alice)"
        let forged = #expect(throws: PostgresCluster.Failure.self) {
            try cluster.psql("""
                SELECT set_config('fatchat.migrating', 'on', false);
                INSERT INTO fatchat.record (zone, name, type, fields, created, modified, creator, modifier, tag)
                SELECT zone, 'forged', 'Message', '{}', 0, 0, '\(aliceAccount)', '\(aliceAccount)', 't' FROM fatchat.record LIMIT 1
                """, as: Self.bob)
        }
        #expect(forged?.description.contains("is not the role \(Self.bob)") == true, "\(forged?.description ?? "")")
        let post = try await run(as: Self.alice, ["post", "--container", container, "general", "after the move"])
        #expect(post.succeeded, "\(post.errorText)")
        #expect(try cluster.psql("SELECT count(*) FROM fatchat.record WHERE type = 'Message'") == "5")
        // Each one's channel alert (the subscription joining saved) is on the server: copied by the migration from a
        // single file, carried by each member's own client, which has now opened the server, from its old log cache.
        let accounts = [aliceAccount, "_\(OSUsers.ids(of: Self.bob)?.uid ?? 0)_\(Self.bob)"].sorted()
        #expect(try cluster.psql("SELECT string_agg(owner || ' ' || id, ',' ORDER BY owner, id) FROM fatchat.subscription")
                == accounts.map { "\($0) messages.general" }.joined(separator: ","))

        // Running it again is refused, and so is a copy that clients have written to since, and a second container into the now full database.
        let again = try await asRoot(["admin", "migrate", container, "--to", cluster.url])
        #expect(again.failed && again.errorText.contains("already"), "\(again.errorText)")
        if engine == "log" {
            try setDescriptor(container, engine: engine)
            let written = try await asRoot(["admin", "migrate", container, "--to", cluster.url])
            #expect(written.failed && written.errorText.contains("clients have written to since"), "\(written.errorText)")
            #expect(try cluster.psql("SELECT count(*) FROM fatchat.record WHERE type = 'Message'") == "5")
        }
        let other = root.appendingPathComponent("other").path
        #expect(try await asRoot(["init", other, "--engine", engine]).succeeded)
        #expect(try await asRoot(["post", "--container", other, "general", "hi"]).succeeded)
        let full = try await asRoot(["admin", "migrate", other, "--to", cluster.url])
        #expect(full.failed && full.errorText.contains("already holds"), "\(full.errorText)")
        #expect(try descriptor(other)["engine"] as? String == engine)
    }

    /// Every record of the chat's types, as `admin query --json` prints it (read as root), sorted by name.
    private func snapshot(_ container: String) async throws -> [[String: Any]] {
        var records: [[String: Any]] = []
        for type in Self.types {
            let query = try await asRoot(["admin", "query", "--container", container, type, "--limit", "1000", "--json"])
            #expect(query.succeeded, "\(query.errorText)")
            records += SharedContainerFixture.objects(query.process)
        }
        return records.sorted { ($0["recordName"] as? String ?? "") < ($1["recordName"] as? String ?? "") }
    }

    /// Each record of a shared SQLite file as `name|type|creator|modifier|created ms|modified ms|tag`, by name.
    private func sqliteRows(_ path: String) throws -> [String] {
        let output = try SQLiteCLI.run(path, """
            SELECT name || '|' || type || '|' || creator || '|' || modifier || '|' || CAST(round(created * 1000) AS INTEGER) || '|' || CAST(round(modified * 1000) AS INTEGER) || '|' || tag FROM record ORDER BY name;
            """)
        return output.split(separator: "\n").map(String.init)
    }

    /// A finished `fatchat` run and how it ended.
    struct Ran {
        var process: WorkerProcess
        var termination: WorkerProcess.Termination
        var succeeded: Bool { termination == .success }
        var failed: Bool { !termination.signaled && termination.status != 0 }
        var lines: [String] { process.lines }
        var errorText: String { process.errorText }
    }

    /// `fatchat ARGUMENTS` as the OS user `user`, waited for.
    private func run(as user: String, _ arguments: [String]) async throws -> Ran {
        let process = try WorkerProcess("\(user) \(arguments.first ?? "")", executable: "fatchat", arguments, launcher: OSUsers.launcher(for: user))
        return Ran(process: process, termination: try await process.finish(timeout: .seconds(120)))
    }

    /// `fatchat ARGUMENTS` as root (the test's own user), waited for.
    private func asRoot(_ arguments: [String]) async throws -> Ran {
        let process = try WorkerProcess("root \(arguments.first ?? "")", executable: "fatchat", arguments)
        return Ran(process: process, termination: try await process.finish(timeout: .seconds(120)))
    }

    /// Rewrites `container.json` to name `engine` again, as a run cut short before its switch would have left it.
    private func setDescriptor(_ container: String, engine: String) throws {
        var object = try descriptor(container)
        object["engine"] = engine
        object["postgresURL"] = nil
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: container + "/container.json"))
    }

    private func descriptor(_ container: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: container + "/container.json"))) as? [String: Any] ?? [:]
    }
}
