import Foundation
import ProcessTestKit
import Testing

/// A client on a second host chats with a local one through the server. The second host is a network
/// namespace with a veth pair to this one: it reaches the server over TCP only, with a password
/// from its password file, and keeps a container folder of its own.
@Suite(.startsProcesses, .serialized,
       .enabled(if: PostgresCluster.shouldRun && (NetworkNamespace.unavailableReason == nil || ProcessInfo.processInfo.environment["CI"] == "true"),
                "\(PostgresCluster.unavailableReason ?? NetworkNamespace.unavailableReason ?? "")"))
struct PostgresSecondHostTests {
    static let alice = "fatchat-test-pha"
    static let bob = "fatchat-test-phb"

    @Test("bob, on another host, joins over TCP with a password file; he and alice see each other's messages as they are posted")
    func aClientOnAnotherHostChatsWithALocalOne() async throws {
        try OSUsers.ensure(users: [Self.alice, Self.bob])
        let host = try NetworkNamespace()
        defer { host.remove() }
        let cluster = try PostgresCluster(alsoListeningOn: [host.hostAddress], allowing: [host.network])
        defer { cluster.stop() }
        for role in ["root", Self.alice, Self.bob] { try cluster.createRole(role) }
        try cluster.setPassword("correct horse", of: Self.bob)
        let root = URL(fileURLWithPath: "/tmp/fatchat-pg-host-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])

        // This host: a container on the Unix socket, where peer authentication names the role.
        let here = try await PostgresChatTests.madeContainer(on: cluster, in: root)

        // The other host: bob's own folder, his password file, and a URL with the server's address and no password.
        let away = root.appendingPathComponent("other-host")
        let bobUser = try #require(OSUsers.ids(of: Self.bob))
        try FileManager.default.createDirectory(at: away, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let passFile = away.appendingPathComponent("pgpass").path
        try Data("\(host.hostAddress):\(cluster.port):\(cluster.database):\(Self.bob):correct horse\n".utf8).write(to: URL(fileURLWithPath: passFile))
        chmod(passFile, 0o600)
        for path in [away.path, passFile] { chown(path, bobUser.uid, bobUser.gid) }
        let bobThere = host.launcher + OSUsers.launcher(for: Self.bob) + ["PGPASSFILE=\(passFile)", "XDG_DATA_HOME=\(away.path)/data"]
        let container = away.appendingPathComponent("chat").path

        // From there, this host's loopback is not the server's: only the veth address reaches it.
        let unreachable = try WorkerProcess("init", executable: "fatchat",
                                            ["init", container, "--postgres", "postgresql://127.0.0.1:\(cluster.port)/\(cluster.database)"],
                                            launcher: bobThere)
        #expect(try await unreachable.finish(timeout: .seconds(60)) != .success, "\(unreachable.lines)")
        #expect(unreachable.errorText.contains("PostgreSQL server at 127.0.0.1"), "\(unreachable.errorText)")
        let url = "postgresql://\(host.hostAddress):\(cluster.port)/\(cluster.database)"
        let made = try WorkerProcess("init", executable: "fatchat", ["init", container, "--postgres", url], launcher: bobThere)
        #expect(try await made.finish(timeout: .seconds(60)) == .success, "\(made.errorText)")
        let descriptor = try String(contentsOfFile: container + "/container.json", encoding: .utf8)
        #expect(!descriptor.contains("correct horse"), "\(descriptor)")

        let bobInput = Pipe()
        let bob = try WorkerProcess("bob bot", executable: "fatchat", ["bot", "--container", container, "--json", "--join", "general"],
                                    launcher: bobThere, input: bobInput.fileHandleForReading)
        defer { bob.killIfRunning() }
        #expect(await bob.waitForLines(1, timeout: .seconds(60)), "bob's bot joined: \(bob.errorText)")
        let (alice, aliceInput) = try SharedContainerFixture.runningBot(Self.alice, ["--container", here, "--json", "--join", "general"])
        defer { alice.killIfRunning() }
        #expect(await alice.waitForLines(1, timeout: .seconds(60)), "alice's bot joined: \(alice.errorText)")

        // Bob's connection comes from the other host's address.
        #expect(try cluster.psql("SELECT DISTINCT host(client_addr) FROM pg_stat_activity WHERE usename = '\(Self.bob)'") == host.guestAddress)

        func send(_ input: Pipe, _ text: String) {
            input.fileHandleForWriting.write(Data(#"{"cmd":"post","channel":"general","text":"\#(text)"}"#.utf8 + [10]))
        }
        send(aliceInput, "hello from this host")
        let heard = await SharedContainerFixture.object(in: bob) { $0["type"] as? String == "message" && $0["text"] as? String == "hello from this host" }
        #expect((heard?["user"] as? String)?.hasSuffix("_\(Self.alice)") == true, "\(bob.lines) \(bob.errorText)")
        send(bobInput, "hello from the other host")
        let answered = await SharedContainerFixture.object(in: alice) { $0["type"] as? String == "message" && $0["text"] as? String == "hello from the other host" }
        #expect((answered?["user"] as? String)?.hasSuffix("_\(Self.bob)") == true, "\(alice.lines) \(alice.errorText)")

        // The server took bob's role from his login: the row is his, and alice cannot change it.
        #expect(try cluster.psql("SELECT owner FROM fatchat.record WHERE type = 'Message' AND fields->'text'->>'v' = 'hello from the other host'") == Self.bob)
        let updated = try cluster.psql("WITH done AS (UPDATE fatchat.record SET tag = 'x' WHERE owner = '\(Self.bob)' RETURNING 1) SELECT count(*) FROM done", as: Self.alice)
        #expect(updated == "0")

        try bobInput.fileHandleForWriting.close()
        try aliceInput.fileHandleForWriting.close()
        #expect(try await bob.finish(timeout: .seconds(60)) == .success, "\(bob.errorText)")
        #expect(try await alice.finish(timeout: .seconds(60)) == .success, "\(alice.errorText)")
    }
}
