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
        try OSUsers.ensure(users: [Self.alice, Self.bob])
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        for role in ["root", Self.alice, Self.bob] { try cluster.createRole(role) }
        let root = URL(fileURLWithPath: "/tmp/fatchat-pg-chat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(at: root) }
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

    private func post(_ text: String, as user: String, in container: String) async throws {
        let post = try WorkerProcess("post", executable: "fatchat", ["post", "--container", container, "general", text],
                                     launcher: OSUsers.launcher(for: user))
        #expect(try await post.finish(timeout: .seconds(60)) == .success, "\(user): \(post.errorText)")
    }
}
