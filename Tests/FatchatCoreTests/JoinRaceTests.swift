import Foundation
import ProcessTestKit
import Testing

/// Two real OS users create the same new channel at the same moment, by posting to it.
@Suite(.startsProcesses, .serialized, .enabled(if: OSUsers.available, "needs root to create the OS users fcwaitalice and fcwaitbob"))
struct JoinRaceTests {
    static let users = ["fcwaitalice", "fcwaitbob"]
    static let group = "fcwaitgroup"

    @Test func twentyPostsFromTwoUsersToANewChannelAllGoOut() async throws {
        try OSUsers.ensure(users: Self.users, group: Self.group)
        let root = URL(fileURLWithPath: "/tmp/fatchat-race-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(at: root) }
        let container = root.appendingPathComponent("chat").path
        let made = try WorkerProcess("init", executable: "fatchat", ["init", container, "--group", Self.group])
        #expect(try await made.finish(timeout: .seconds(60)) == .success, "\(made.errorText)")

        // Two new channels, each raced for by ten posts of each user started together.
        for channel in ["general", "random"] {
            let posts = try (0..<20).map { i in
                let user = Self.users[i % 2]
                return try WorkerProcess("\(user) post \(i)", executable: "fatchat",
                                         ["post", "--container", container, "--timeout", "60", channel, "post \(i)"],
                                         launcher: OSUsers.launcher(for: user))
            }
            for (i, post) in posts.enumerated() {
                let end = try await post.finish(timeout: .seconds(180))
                #expect(end == .success, "post \(i) to #\(channel): \(post.errorText)")
            }
            let read = try WorkerProcess("read", executable: "fatchat", ["read", "--container", container, channel, "--json", "--last", "100"],
                                         launcher: OSUsers.launcher(for: Self.users[0]))
            _ = try await read.finish(timeout: .seconds(60))
            let texts = read.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.compactMap { $0["text"] as? String }
            #expect(Set(texts) == Set((0..<20).map { "post \($0)" }), "\(read.errorText)")
            #expect(texts.count == 20)

            let who = try WorkerProcess("who", executable: "fatchat", ["who", "--container", container, channel],
                                        launcher: OSUsers.launcher(for: Self.users[1]))
            _ = try await who.finish(timeout: .seconds(60))
            #expect(Set(who.lines) == Set(Self.users), "both are members of #\(channel)")
        }
    }
}
