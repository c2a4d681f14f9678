import Foundation
import ProcessTestKit
import Testing

/// Mallory, a member of the group, attacks the shared files directly with `sqlite3`, `ln -s` and `rm`;
/// alice, another member, and root must come to no harm beyond spoiled chat content.
@Suite(.startsProcesses, .serialized, .enabled(if: OSUsers.available && FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"),
                             "needs root to create OS users, and the sqlite3 CLI"))
struct HostileContainerTests {
    static let alice = "fcfsalice"
    static let mallory = "fcfsmallory"
    static let outsider = "fcfsoutsider"
    static let group = "fcfsgroup"

    /// A container made by root with `fatchat init --group`, in a fresh directory every user can reach.
    final class Sandbox {
        let root: URL
        let container: String
        var publicFile: String { container + "/public.sqlite" }

        init(arguments: [String] = []) async throws {
            try OSUsers.ensure(users: [HostileContainerTests.alice, HostileContainerTests.mallory], group: HostileContainerTests.group)
            try OSUsers.ensure(users: [HostileContainerTests.outsider])
            root = URL(fileURLWithPath: "/tmp/fcfs-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            container = root.appendingPathComponent("chat").path
            let made = try WorkerProcess("init", executable: "fatchat", ["init", container, "--group", HostileContainerTests.group] + arguments)
            let end = try await made.finish(timeout: .seconds(60))
            guard end == .success else { throw WorkerProcess.Failure(description: "init: \(end): \(made.errorText)") }
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        /// A file of alice's own, 0600 in her home, that nobody else may read or remove.
        func precious(_ name: String) throws -> String {
            let path = "/home/\(HostileContainerTests.alice)/\(root.lastPathComponent)-\(name)"
            try Data("precious \(name)".utf8).write(to: URL(fileURLWithPath: path))
            guard let user = OSUsers.ids(of: HostileContainerTests.alice), chown(path, user.uid, user.gid) == 0, chmod(path, 0o600) == 0 else {
                throw WorkerProcess.Failure(description: "cannot give \(path) to alice")
            }
            return path
        }

        /// `path` written as an asset name that climbs out of `assets/` to the root.
        func traversal(to path: String) -> String { String(repeating: "../", count: 12) + String(path.dropFirst()) }
    }

    /// Runs `fatchat ARGS` as `user` to the end, with `input` as its standard input.
    @discardableResult
    private func fatchat(_ user: String, _ arguments: [String], input: String? = nil) async throws -> WorkerProcess {
        let process = try WorkerProcess("\(user) \(arguments.first ?? "")", executable: "fatchat", arguments, launcher: launcher(user),
                                        input: try input.map(WorkerProcess.input))
        try await process.finish(timeout: .seconds(120))
        return process
    }

    /// Runs a shell script as `user`; `$1`, `$2`, … are `arguments`.
    @discardableResult
    private func shell(_ user: String, _ script: String, _ arguments: [String] = []) async throws -> WorkerProcess {
        let process = try WorkerProcess("\(user): \(script)", executable: "fatchat", arguments,
                                        launcher: launcher(user) + ["/bin/sh", "-c", script])
        try await process.finish(timeout: .seconds(60))
        return process
    }

    /// Root runs as the test itself does; anyone else through `setpriv`.
    private func launcher(_ user: String) -> [String] {
        user == "root" ? ["/usr/bin/env"] : OSUsers.launcher(for: user)
    }

    /// Runs SQL on `database` with the sqlite3 CLI as `user`.
    @discardableResult
    private func sqlite(_ user: String, _ database: String, _ sql: String) async throws -> WorkerProcess {
        try await shell(user, "/usr/bin/sqlite3 \"$1\" \"$2\"", [database, sql])
    }

    /// The JSON objects a `--json` command printed.
    private func objects(_ process: WorkerProcess) -> [[String: Any]] {
        process.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    private func messageIDs(_ sandbox: Sandbox, _ channel: String) async throws -> [String: String] {
        let read = try await fatchat(Self.alice, ["read", "--container", sandbox.container, channel, "--json"])
        var ids: [String: String] = [:]
        for object in objects(read) {
            if let text = object["text"] as? String, let id = object["id"] as? String { ids[text] = id }
        }
        return ids
    }

    private func status(_ path: String) throws -> stat {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw WorkerProcess.Failure(description: "lstat \(path): \(String(cString: strerror(errno)))") }
        return info
    }

    private func contents(_ path: String) -> String? {
        try? String(contentsOf: URL(fileURLWithPath: path), encoding: .utf8)
    }

    // MARK: 1. Asset names used as paths

    @Test func plantedAssetPathsNeverReachTheVictimsFiles() async throws {
        let sandbox = try await Sandbox()
        let c = sandbox.container
        try await fatchat(Self.alice, ["post", "--container", c, "doomed", "first"])
        try await fatchat(Self.alice, ["post", "--container", c, "doomed", "second"])
        try await fatchat(Self.alice, ["post", "--container", c, "left", "hello"])
        let ids = try await messageIDs(sandbox, "doomed")
        let first = try #require(ids["first"])
        let targets = try ["del", "leave", "delete", "reset"].map { ($0, try sandbox.precious($0)) }
        defer { for (_, path) in targets { unlink(path) } }
        let path = Dictionary(uniqueKeysWithValues: targets)

        // Mallory names alice's files as the attachments of alice's own records, and as assets in use.
        func planted(_ target: String?) -> String {
            "json_set(fields, '$.planted', json_object('t', 'a', 'v', '\(sandbox.traversal(to: target ?? ""))', 'x', 1))"
        }
        let attack = try await sqlite(Self.mallory, sandbox.publicFile, """
            UPDATE record SET fields = \(planted(path["del"])) WHERE name = '\(first)';
            UPDATE record SET fields = \(planted(path["delete"])) WHERE type = 'Message' AND json_extract(fields, '$.text.v') = 'second';
            UPDATE record SET fields = \(planted(path["leave"])) WHERE type = 'Membership' AND name LIKE 'member.left.%';
            INSERT INTO asset_use (hash, record) SELECT '\(sandbox.traversal(to: path["reset"] ?? ""))', id FROM record WHERE name = 'channel.left';
            """)
        #expect(attack.errorText.isEmpty, "\(attack.errorText)")

        try await fatchat(Self.alice, ["bot", "--container", c, "--join", "doomed", "--drain-timeout", "5"],
                          input: "/del \(first.prefix(8))\n/leave left\n/delete doomed\n")
        let check = try await fatchat(Self.alice, ["admin", "check", "--container", c])
        try await fatchat(Self.alice, ["admin", "reset", "--yes", "--container", c])

        for (name, file) in targets {
            #expect(contents(file) == "precious \(name)", "alice's \(name) file after her own /\(name)")
        }
        #expect(check.lines.contains { $0.contains("not a SHA-256") }, "admin check: \(check.lines) \(check.errorText)")
    }

    @Test func saveOfAPlantedAssetRefuses() async throws {
        let sandbox = try await Sandbox()
        let c = sandbox.container
        let secret = try sandbox.precious("secret")
        defer { unlink(secret) }
        // Mallory attaches two harmless files, then points one at alice's secret with a symlink and the other with a path.
        let bait = sandbox.root.appendingPathComponent("bait")
        try FileManager.default.createDirectory(at: bait, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        for name in ["linked.txt", "climbing.txt"] {
            try Data("harmless \(name)".utf8).write(to: bait.appendingPathComponent(name))
        }
        chmod(bait.path, 0o755)
        try await fatchat(Self.mallory, ["bot", "--container", c, "--join", "files"],
                          input: "/attach \(bait.path)/linked.txt\n/attach \(bait.path)/climbing.txt\n")
        let ids = try await messageIDs(sandbox, "files")
        let linked = try #require(ids["linked.txt"]), climbing = try #require(ids["climbing.txt"])
        let hashes = try FileManager.default.contentsOfDirectory(atPath: c + "/assets").filter { !$0.hasPrefix(".") }
        #expect(hashes.count == 2)
        try await shell(Self.mallory, "for h in $2 $3; do rm -f \"$1/assets/$h\" && ln -s \"$4\" \"$1/assets/$h\"; done", [c] + hashes + [secret])
        try await sqlite(Self.mallory, sandbox.publicFile,
                         "UPDATE record SET fields = json_set(fields, '$.attachment.v', '\(sandbox.traversal(to: secret))') WHERE name = '\(climbing)'")

        let out = sandbox.root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        chmod(out.path, 0o777)
        let save = try await fatchat(Self.alice, ["bot", "--container", c, "--join", "files"],
                                     input: "/save \(linked.prefix(8)) \(out.path)/linked\n/save \(climbing.prefix(8)) \(out.path)/climbing\n")
        #expect(!FileManager.default.fileExists(atPath: out.path + "/linked"), "copied through a symlink: \(save.lines)")
        #expect(!FileManager.default.fileExists(atPath: out.path + "/climbing"), "copied through ../: \(save.lines)")
        #expect(contents(secret) == "precious secret")
    }

    @Test func attachRefusesWhatIsNotARegularFileAndDoesNotHang() async throws {
        let sandbox = try await Sandbox()
        let sources = sandbox.root.appendingPathComponent("sources")
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try FileManager.default.createSymbolicLink(atPath: sources.path + "/zero", withDestinationPath: "/dev/zero")
        #expect(mkfifo(sources.path + "/fifo", 0o666) == 0)
        try FileManager.default.createDirectory(atPath: sources.path + "/folder", withIntermediateDirectories: true)
        let bot = try await fatchat(Self.alice, ["bot", "--container", sandbox.container, "--join", "files", "--json"],
                                    input: ["zero", "fifo", "folder"].map { "{\"cmd\":\"attach\",\"path\":\"\(sources.path)/\($0)\"}\n" }.joined())
        let errors = objects(bot).filter { $0["type"] as? String == "error" }.compactMap { $0["text"] as? String }
        #expect(errors.count == 3, "\(bot.lines) \(bot.errorText)")
        #expect(errors.allSatisfy { $0.contains("not a regular file") }, "\(errors)")
    }

    // MARK: 2. Symlinks in the container

    @Test func initFollowsNoSymlinkAndChangesNothingItDidNotMake() async throws {
        let sandbox = try await Sandbox()
        let c = sandbox.container
        let rootOwned = sandbox.root.appendingPathComponent("root-owned").path
        try FileManager.default.createDirectory(atPath: rootOwned, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try await shell(Self.mallory, "rm \"$1/container.json\" && rmdir \"$1/assets\" && ln -s \"$2\" \"$1/assets\"", [c, rootOwned])

        let again = try await fatchat("root", ["init", c, "--group", Self.group])
        #expect(again.errorText.contains("public.sqlite"), "\(again.errorText)")
        try await shell(Self.mallory, "rm \"$1/public.sqlite\"", [c])
        let third = try await fatchat("root", ["init", c, "--group", Self.group])
        #expect(third.errorText.contains("assets"), "\(third.errorText)")

        let info = try status(rootOwned)
        #expect(info.st_mode & 0o7777 == 0o700)
        #expect(info.st_gid == 0)
        #expect(!FileManager.default.fileExists(atPath: c + "/container.json"))
    }

    @Test func aPublicDatabaseSymlinkedToTheVictimsPrivateOneIsRefused() async throws {
        let sandbox = try await Sandbox()
        let c = sandbox.container
        try await fatchat(Self.alice, ["post", "--container", c, "general", "hello"])
        let descriptor = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: c + "/container.json"))) as? [String: Any]
        let identifier = try #require(descriptor?["identifier"] as? String)
        let privateFile = "/home/\(Self.alice)/.local/share/fatchat/\(identifier)/private.sqlite"
        #expect(FileManager.default.fileExists(atPath: privateFile))

        try await shell(Self.mallory, "mv \"$1/public.sqlite\" \"$1/stolen.sqlite\" && ln -s \"$2\" \"$1/public.sqlite\"", [c, privateFile])
        let post = try await fatchat(Self.alice, ["post", "--container", c, "general", "into the wrong file"])
        #expect(post.errorText.contains("symbolic link"), "\(post.errorText)")
        let landed = try await sqlite("root", privateFile, "SELECT count(*) FROM record WHERE type IN ('Message', 'Channel')")
        #expect(landed.lines == ["0"], "alice's private database holds public records: \(landed.lines)")
    }

    // MARK: 3. A vanished container.json

    @Test func aVanishedDescriptorIsAnErrorThatSaysSo() async throws {
        let sandbox = try await Sandbox()
        let c = sandbox.container
        try await fatchat(Self.alice, ["post", "--container", c, "general", "hello"])
        try await shell(Self.mallory, "rm \"$1/container.json\"", [c])
        let post = try await fatchat(Self.alice, ["post", "--container", c, "general", "again"])
        #expect(post.errorText.contains("container.json has gone"), "\(post.errorText)")
        #expect(!FileManager.default.fileExists(atPath: c + "/container.json"))
    }

    // MARK: 11. Opening a file changes it

    @Test func aForeignRollbackFileStaysInRollbackModeAndByteIdentical() async throws {
        let sandbox = try await Sandbox()
        try await shell(Self.mallory, "rm \"$1\" && /usr/bin/sqlite3 \"$1\" 'CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)' && chmod 660 \"$1\"", [sandbox.publicFile])
        let before = try Data(contentsOf: URL(fileURLWithPath: sandbox.publicFile))
        #expect(before[18] == 1, "rollback journal to begin with")
        let post = try await fatchat(Self.alice, ["post", "--container", sandbox.container, "general", "hello"])
        #expect(post.errorText.contains("not a Fatchat one"), "\(post.errorText)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.publicFile)) == before)
        #expect(!FileManager.default.fileExists(atPath: sandbox.publicFile + "-wal"))
    }

    @Test func aTruncatedDatabaseIsAnErrorAndStaysEmpty() async throws {
        let sandbox = try await Sandbox()
        try await fatchat(Self.alice, ["post", "--container", sandbox.container, "general", "hello"])
        try await shell(Self.mallory, ": > \"$1\"", [sandbox.publicFile])
        let post = try await fatchat(Self.alice, ["post", "--container", sandbox.container, "general", "again"])
        #expect(post.errorText.contains("empty"), "\(post.errorText)")
        #expect(try status(sandbox.publicFile).st_size == 0)
    }

    @Test func aNewerFatchatFileKeepsEveryByte() async throws {
        let sandbox = try await Sandbox()
        try await fatchat(Self.alice, ["post", "--container", sandbox.container, "general", "hello"])
        try await sqlite(Self.mallory, sandbox.publicFile, "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')")
        let before = try Data(contentsOf: URL(fileURLWithPath: sandbox.publicFile))
        let post = try await fatchat(Self.alice, ["post", "--container", sandbox.container, "general", "again"])
        #expect(post.errorText.contains("newer version"), "\(post.errorText)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.publicFile)) == before)
    }

    // MARK: 13. Who may read a group container

    @Test func aGroupContainerIsTheGroupsAlone() async throws {
        let sandbox = try await Sandbox()
        let c = sandbox.container
        let source = sandbox.root.appendingPathComponent("mine.txt").path
        try Data("alice's attachment".utf8).write(to: URL(fileURLWithPath: source))
        guard let alice = OSUsers.ids(of: Self.alice), let group = OSUsers.groupID(of: Self.group) else { throw WorkerProcess.Failure(description: "no alice") }
        chown(source, alice.uid, alice.gid)
        chmod(source, 0o600)
        try await fatchat(Self.alice, ["bot", "--container", c, "--join", "files"], input: "/attach \(source)\n")
        let asset = try #require(try FileManager.default.contentsOfDirectory(atPath: c + "/assets").first { !$0.hasPrefix(".") })

        let expected: [(String, mode_t)] = [("", 0o2770), ("/assets", 0o2770), ("/public.sqlite", 0o660), ("/container.json", 0o640), ("/assets/\(asset)", 0o640)]
        for (entry, mode) in expected {
            let info = try status(c + entry)
            #expect(info.st_mode & 0o7777 == mode, "\(entry): \(String(info.st_mode & 0o7777, radix: 8))")
            #expect(info.st_gid == group, "\(entry) belongs to the group")
        }
        let peek = try await shell(Self.outsider, "cat \"$1/public.sqlite\" > /dev/null && echo read; ls \"$1\" > /dev/null && echo listed", [c])
        #expect(peek.lines.isEmpty, "an outsider got in: \(peek.lines)")

        let open = try await Sandbox(arguments: ["--public"])
        for (entry, mode) in [("", 0o2775), ("/public.sqlite", 0o664)] as [(String, mode_t)] {
            #expect(try status(open.container + entry).st_mode & 0o7777 == mode, "--public \(entry)")
        }
    }
}
