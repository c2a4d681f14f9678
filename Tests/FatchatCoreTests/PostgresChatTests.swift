import Foundation
import ProcessTestKit
import Testing

/// The chat on a `postgresql` container, with the real `fatchat`, real OS users and a real server:
/// `init --postgres`, two people chatting, and a server that goes away and comes back.
@Suite(.startsProcesses, .serialized, .enabled(if: PostgresCluster.shouldRun, "\(PostgresCluster.unavailableReason ?? "")"))
struct PostgresChatTests {
    static let alice = "fatchat-test-pga"
    static let bob = "fatchat-test-pgb"

    @Test("init --postgres records the engine and URL (never a password); alice and bob chat; a post while the server is down is queued and sent later")
    func twoUsersChatThroughTheServer() async throws {
        let (cluster, root) = try Self.serverAndFolder()
        defer { cluster.stop(); try? FileManager.default.removeItem(at: root) }
        let container = root.appendingPathComponent("chat").path

        // A URL with a password is refused, and leaves nothing behind.
        let refused = try WorkerProcess("init", executable: "fatchat", ["init", container, "--postgres", "postgresql://root:secret@127.0.0.1:\(cluster.port)/fatchat"])
        #expect(try await refused.finish(timeout: .seconds(60)) == WorkerProcess.Termination(status: 1, signaled: false))
        #expect(refused.errorText.contains("password"), "\(refused.errorText)")
        #expect(!FileManager.default.fileExists(atPath: container))

        let made = try WorkerProcess("init", executable: "fatchat", ["init", container, "--public", "--postgres", cluster.url])
        #expect(try await made.finish(timeout: .seconds(60)) == .success, "\(made.errorText)")
        #expect(made.lines.contains { $0.contains("postgresql engine") }, "\(made.lines)")
        let descriptor = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: container + "/container.json"))) as? [String: Any]
        #expect(descriptor?["engine"] as? String == "postgresql" && descriptor?["postgresURL"] as? String == cluster.url, "\(descriptor ?? [:])")
        #expect(!FileManager.default.fileExists(atPath: container + "/public.sqlite"))

        try await post("hello from alice", as: Self.alice, in: container)
        try await post("hello from bob", as: Self.bob, in: container)
        let read = try WorkerProcess("read", executable: "fatchat", ["read", "--container", container, "general", "--last", "10"],
                                     launcher: OSUsers.launcher(for: Self.bob))
        #expect(try await read.finish(timeout: .seconds(60)) == .success, "\(read.errorText)")
        #expect(read.lines.count == 2 && read.lines[0].hasSuffix("hello from alice") && read.lines[1].hasSuffix("hello from bob"), "\(read.lines)")
        #expect(try cluster.psql("SELECT count(*) FROM fatchat.record WHERE type = 'Message' AND owner = '\(Self.alice)'") == "1")

        // With the server gone the post is kept in alice's outbox (exit 3), and the next run sends it, once.
        try cluster.kill()
        let queued = try WorkerProcess("post", executable: "fatchat", ["post", "--container", container, "--timeout", "2", "general", "while it was down"],
                                       launcher: OSUsers.launcher(for: Self.alice))
        #expect(try await queued.finish(timeout: .seconds(60)) == WorkerProcess.Termination(status: 3, signaled: false), "\(queued.errorText)")
        try cluster.start()
        try await post("after it came back", as: Self.alice, in: container)
        let again = try WorkerProcess("read", executable: "fatchat", ["read", "--container", container, "general", "--last", "10"],
                                      launcher: OSUsers.launcher(for: Self.bob))
        #expect(try await again.finish(timeout: .seconds(60)) == .success, "\(again.errorText)")
        for line in ["while it was down", "after it came back"] {
            #expect(again.lines.filter { $0.hasSuffix(line) }.count == 1, "\(line) in \(again.lines)")
        }
    }

    @Test("A running client holds one connection; a post the server turns away for want of one is kept, and sent once one is free")
    func aPostTurnedAwayForWantOfAConnectionIsKept() async throws {
        let (cluster, root) = try Self.serverAndFolder()
        defer { cluster.stop(); try? FileManager.default.removeItem(at: root) }
        let container = try await Self.madeContainer(on: cluster, in: root)
        try await post("before the limit", as: Self.alice, in: container)
        _ = try cluster.psql("ALTER ROLE \"\(Self.alice)\" CONNECTION LIMIT 1")
        let connections = "SELECT count(*) FROM pg_stat_activity WHERE usename = '\(Self.alice)'"

        // A follower listens, reads and sends on one connection, so it fits in alice's one.
        let follower = try WorkerProcess("follow", executable: "fatchat", ["read", "--container", container, "general", "--follow"],
                                         launcher: OSUsers.launcher(for: Self.alice))
        defer { follower.killIfRunning() }
        #expect(await follower.waitForLines(1, timeout: .seconds(60)), "\(follower.errorText)")
        #expect(await waitUntil(timeout: .seconds(10)) { (try? cluster.psql(connections)) == "1" })
        try await Task.sleep(for: .seconds(1))
        #expect(try cluster.psql(connections) == "1", "the follower holds one connection, and was not turned away: \(follower.errorText)")
        // On that one connection it hears of bob's commit and reads it.
        try await post("bob to the follower", as: Self.bob, in: container)
        #expect(await waitUntil(timeout: .seconds(20)) { follower.lines.contains { $0.hasSuffix("bob to the follower") } }, "\(follower.lines)")

        // A second client of alice's is turned away: its post waits in her outbox (exit 3) and says why.
        let turnedAway = try WorkerProcess("post", executable: "fatchat", ["post", "--container", container, "--timeout", "2", "general", "over the limit"],
                                           launcher: OSUsers.launcher(for: Self.alice))
        #expect(try await turnedAway.finish(timeout: .seconds(60)) == WorkerProcess.Termination(status: 3, signaled: false), "\(turnedAway.errorText)")
        #expect(turnedAway.errorText.contains("too many connections"), "\(turnedAway.errorText)")

        follower.killIfRunning()
        #expect(await waitUntil(timeout: .seconds(30)) { (try? cluster.psql(connections)) == "0" })
        try await post("once one was free", as: Self.alice, in: container)
        let read = try WorkerProcess("read", executable: "fatchat", ["read", "--container", container, "general", "--last", "10"],
                                     launcher: OSUsers.launcher(for: Self.bob))
        #expect(try await read.finish(timeout: .seconds(60)) == .success, "\(read.errorText)")
        for line in ["before the limit", "bob to the follower", "over the limit", "once one was free"] {
            #expect(read.lines.filter { $0.hasSuffix(line) }.count == 1, "\(line) in \(read.lines)")
        }
    }

    @Test("A public key is a row its account's role owns: bob cannot replace alice's, and a line the server's administrator rewrites reads as unverified")
    func keysAreRowsAndSignaturesVerify() async throws {
        let (cluster, root) = try Self.serverAndFolder()
        defer { cluster.stop(); try? FileManager.default.removeItem(at: root) }
        let container = try await Self.madeContainer(on: cluster, in: root)
        for (user, text) in [(Self.alice, "deploy at noon"), (Self.alice, "lunch is on me"), (Self.bob, "bob here")] {
            try await post(text, as: user, in: container)
        }
        let account = { (user: String) in "_\(OSUsers.ids(of: user)?.uid ?? 0)_\(user)" }
        #expect(try cluster.psql("SELECT role FROM fatchat.identity WHERE account = '\(account(Self.alice))'") == Self.alice)
        #expect(!FileManager.default.fileExists(atPath: container + "/keys"), "no key files beside a server")

        // bob may not put his key in alice's row, nor publish one under another account of her name.
        let replaced = try cluster.psql("""
            WITH done AS (UPDATE fatchat.identity SET key = (SELECT key FROM fatchat.identity WHERE account = '\(account(Self.bob))')
                          WHERE account = '\(account(Self.alice))' RETURNING 1) SELECT count(*) FROM done
            """, as: Self.bob)
        #expect(replaced == "0")
        #expect(throws: PostgresCluster.Failure.self) {
            try cluster.psql("INSERT INTO fatchat.identity (account, key, published) VALUES ('_4242_\(Self.alice)', 'x', 0)", as: Self.bob)
        }
        let whois = try WorkerProcess("whois", executable: "fatchat", ["whois", "--container", container, Self.alice], launcher: OSUsers.launcher(for: Self.bob))
        #expect(try await whois.finish(timeout: .seconds(60)) == .success, "\(whois.errorText)")
        #expect(whois.lines.contains { $0.contains(account(Self.alice)) && $0.contains(" key SHA256:") }, "\(whois.lines)")

        // The superuser is above row-level security; what it rewrites no longer matches alice's signature.
        try cluster.psql("UPDATE fatchat.record SET fields = replace(fields::text, 'deploy at noon', 'deploy cancelled')::jsonb WHERE type = 'Message'")
        let read = try WorkerProcess("read", executable: "fatchat", ["read", "--container", container, "general", "--json"], launcher: OSUsers.launcher(for: Self.bob))
        #expect(try await read.finish(timeout: .seconds(60)) == .success, "\(read.errorText)")
        let messages = read.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.filter { $0["type"] as? String == "message" }
        func verified(_ text: String) -> Bool? {
            messages.first { $0["text"] as? String == text }.map { ($0["verified"] as? Bool) ?? true }
        }
        #expect(verified("deploy cancelled") == false, "\(read.lines)")
        #expect(verified("lunch is on me") == true, "\(read.lines)")
        #expect(verified("bob here") == true, "\(read.lines)")
    }

    @Test("Reactions, replies, typing and presence work through the server, and each such record is its creator's alone")
    func reactionsTypingAndPresenceOnTheServer() async throws {
        let (cluster, root) = try Self.serverAndFolder()
        defer { cluster.stop(); try? FileManager.default.removeItem(at: root) }
        let container = try await Self.madeContainer(on: cluster, in: root)
        let (watcher, watcherInput) = try SharedContainerFixture.runningBot(Self.alice, ["--container", container, "--json", "--join", "general"])
        defer { watcher.killIfRunning() }
        #expect(await watcher.waitForLines(1, timeout: .seconds(60)), "alice's bot joined: \(watcher.errorText)")
        let (talker, talkerInput) = try SharedContainerFixture.runningBot(Self.bob, ["--container", container, "--json", "--join", "general"])
        defer { talker.killIfRunning() }
        #expect(await talker.waitForLines(1, timeout: .seconds(60)), "bob's bot joined: \(talker.errorText)")

        func send(_ input: Pipe, _ line: String) { input.fileHandleForWriting.write(Data(line.utf8 + [10])) }
        send(talkerInput, #"{"cmd":"typing"}"#)
        send(talkerInput, #"{"cmd":"away","reason":"at lunch"}"#)
        let typing = await SharedContainerFixture.object(in: watcher) { $0["type"] as? String == "typing" }
        #expect((typing?["user"] as? String)?.hasSuffix("_\(Self.bob)") == true, "\(watcher.lines)")
        let away = await SharedContainerFixture.object(in: watcher) { $0["type"] as? String == "presence" && $0["state"] as? String == "away" }
        #expect(away?["reason"] as? String == "at lunch", "\(watcher.lines)")

        send(watcherInput, #"{"cmd":"post","channel":"general","text":"ship it?"}"#)
        let posted = await SharedContainerFixture.object(in: talker) { $0["type"] as? String == "message" && $0["text"] as? String == "ship it?" }
        let id = try #require(posted?["id"] as? String, "\(talker.lines)")
        send(talkerInput, #"{"cmd":"react","id":"\#(id)","emoji":"👍"}"#)
        send(talkerInput, #"{"cmd":"reply","id":"\#(id)","text":"yes"}"#)
        let reactions = await SharedContainerFixture.object(in: watcher) { $0["type"] as? String == "reactions" && !(($0["reactions"] as? [Any]) ?? []).isEmpty }
        let first = (reactions?["reactions"] as? [[String: Any]])?.first
        #expect(first?["emoji"] as? String == "👍" && first?["count"] as? Int == 1, "\(watcher.lines)")
        let reply = await SharedContainerFixture.object(in: watcher) { $0["type"] as? String == "message" && $0["text"] as? String == "yes" }
        #expect(reply != nil, "\(watcher.lines)")

        // The server's rules hold for these records as for messages: alice can neither remove bob's reaction nor rewrite his presence.
        for type in ["Reaction", "Presence"] {
            #expect(try cluster.psql("SELECT count(*) FROM fatchat.record WHERE type = '\(type)' AND owner = '\(Self.bob)'") != "0", "bob's \(type)")
            let deleted = try cluster.psql("WITH done AS (DELETE FROM fatchat.record WHERE type = '\(type)' AND owner = '\(Self.bob)' RETURNING 1) SELECT count(*) FROM done", as: Self.alice)
            let updated = try cluster.psql("WITH done AS (UPDATE fatchat.record SET tag = 'x' WHERE type = '\(type)' AND owner = '\(Self.bob)' RETURNING 1) SELECT count(*) FROM done", as: Self.alice)
            #expect(deleted == "0" && updated == "0", "\(type): alice deleted \(deleted), updated \(updated)")
        }
        try watcherInput.fileHandleForWriting.close()
        try talkerInput.fileHandleForWriting.close()
        _ = try await watcher.finish(timeout: .seconds(60))
        _ = try await talker.finish(timeout: .seconds(60))
    }

    /// A server with roles for root, alice and bob, and a folder every user can enter for the container.
    private static func serverAndFolder() throws -> (PostgresCluster, URL) {
        try OSUsers.ensure(users: [alice, bob])
        let cluster = try PostgresCluster()
        do {
            for role in ["root", alice, bob] { try cluster.createRole(role) }
            let root = URL(fileURLWithPath: "/tmp/fatchat-pg-chat-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            return (cluster, root)
        } catch {
            cluster.stop()
            throw error
        }
    }

    /// `fatchat init --public --postgres` of a container `chat` in `root`, on `cluster`; its path.
    static func madeContainer(on cluster: PostgresCluster, in root: URL) async throws -> String {
        let container = root.appendingPathComponent("chat").path
        let made = try WorkerProcess("init", executable: "fatchat", ["init", container, "--public", "--postgres", cluster.url])
        #expect(try await made.finish(timeout: .seconds(60)) == .success, "\(made.errorText)")
        return container
    }

    private func post(_ text: String, as user: String, in container: String) async throws {
        let post = try WorkerProcess("post", executable: "fatchat", ["post", "--container", container, "general", text],
                                     launcher: OSUsers.launcher(for: user))
        #expect(try await post.finish(timeout: .seconds(60)) == .success, "\(user): \(post.errorText)")
    }
}
