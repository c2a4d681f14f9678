import Foundation
import ProcessTestKit
import Testing

/// The chat on a `log` container, with the real `fatchat` and real OS users: each
/// person's lines go to their own log, and every client sees every line once.
@Suite(.startsProcesses, .serialized, .enabled(if: OSUsers.available, "needs root, to make OS users"))
struct LogEngineChatTests {
    static let alice = "fatchat-test-lga"
    static let bob = "fatchat-test-lgb"
    static let group = "fatchat-test-lg"

    @Test func twoUsersChatThroughTheirOwnLogsAndEveryLineArrivesOnce() async throws {
        let (root, container) = try await GroupContainer.make(users: [Self.alice, Self.bob], group: Self.group, arguments: ["--engine", "log"])
        defer { try? FileManager.default.removeItem(at: root) }
        let descriptor = try String(contentsOfFile: container + "/container.json", encoding: .utf8)
        #expect(descriptor.contains("\"engine\"") && descriptor.contains("\"log\""), "\(descriptor)")

        try await post("hello from alice", as: Self.alice, in: container)
        let follow = try WorkerProcess("follow", executable: "fatchat", ["read", "--container", container, "general", "--follow"],
                                       launcher: OSUsers.launcher(for: Self.alice))
        defer { follow.killIfRunning() }
        #expect(await follow.waitForLines(1, timeout: .seconds(60)), "the history comes first: \(follow.errorText)")
        let lines = (0..<3).map { "bob line \($0)" }
        for line in lines { try await post(line, as: Self.bob, in: container) }

        // Bob's lines reach Alice's running client through her cache's polls of his log.
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, !lines.allSatisfy({ line in follow.lines.contains { $0.hasSuffix(line) } }) {
            try await Task.sleep(for: .milliseconds(100))
        }
        for line in lines {
            #expect(follow.lines.filter { $0.hasSuffix(line) }.count == 1, "\(line) in \(follow.lines); \(follow.errorText)")
        }

        // A one-shot read through a cache that already exists reads the logs first, so it is not stale.
        follow.killIfRunning()
        try await post("bob after the follow", as: Self.bob, in: container)
        let again = try WorkerProcess("read", executable: "fatchat", ["read", "--container", container, "general", "--last", "50"],
                                      launcher: OSUsers.launcher(for: Self.alice))
        #expect(try await again.finish(timeout: .seconds(60)) == .success, "\(again.errorText)")
        #expect(again.lines.filter { $0.hasSuffix("bob after the follow") }.count == 1, "\(again.lines)")

        // A reader with a cache of its own replays both logs from the start.
        let read = try WorkerProcess("read", executable: "fatchat", ["read", "--container", container, "general", "--last", "50"],
                                     environment: ["XDG_DATA_HOME": root.appendingPathComponent("reader").path])
        #expect(try await read.finish(timeout: .seconds(60)) == .success, "\(read.errorText)")
        for line in ["hello from alice", "bob after the follow"] + lines {
            #expect(read.lines.filter { $0.hasSuffix(line) }.count == 1, "\(line) in \(read.lines)")
        }

        // Each line is in its author's own log, under a directory that author owns.
        let logs = URL(fileURLWithPath: container).appendingPathComponent("logs")
        for (user, text) in [(Self.alice, "hello from alice"), (Self.bob, "bob line 2")] {
            let holders = try logFiles(under: logs).filter { try Data(contentsOf: $0).range(of: Data(text.utf8)) != nil }
            let owners = try holders.map { try FileManager.default.attributesOfItem(atPath: $0.deletingLastPathComponent().path)[.ownerAccountName] as? String }
            #expect(!holders.isEmpty && owners.allSatisfy { $0 == user }, "\(text): \(holders) owned by \(owners)")
        }
    }

    /// Replies and reactions through bots of two users on a `log` container: each account's
    /// emoji counts once however often it is sent, a reply names its parent, and no reaction
    /// is a line of history.
    @Test func repliesAndReactionsWorkThroughTheLogs() async throws {
        let (root, container) = try await GroupContainer.make(users: [Self.alice, Self.bob], group: Self.group, arguments: ["--engine", "log"])
        defer { try? FileManager.default.removeItem(at: root) }
        try await post("ship it", as: Self.alice, in: container)
        let first = try await read(as: Self.alice, in: container)
        let id = try #require(first.first?["id"] as? String, "\(first)")

        let join = #"{"cmd":"join","channel":"general"}"# + "\n"
        try await bot(as: Self.bob, in: container, join + """
            {"cmd":"react","id":"\(id)","emoji":"👍"}
            {"cmd":"react","id":"\(id)","emoji":"👍"}
            {"cmd":"react","id":"\(id)","emoji":"🎉"}
            {"cmd":"reply","id":"\(id)","text":"lgtm"}

            """)
        try await bot(as: Self.alice, in: container, join + #"{"cmd":"react","id":"\#(id)","emoji":"👍"}"# + "\n")
        let lines = try await bot(as: Self.alice, in: container, join + #"{"cmd":"reactions","id":"\#(id)"}"# + "\n")
        let reactions = try #require(lines.first { $0["type"] as? String == "reactions" }?["reactions"] as? [[String: Any]], "\(lines)")
        #expect(reactions.map { $0["emoji"] as? String } == ["👍", "🎉"], "\(reactions)")
        #expect(reactions.map { $0["count"] as? Int } == [2, 1], "\(reactions)")
        #expect(Set(reactions.first?["users"] as? [String] ?? []).count == 2, "\(reactions)")

        let history = try await read(as: Self.alice, in: container)
        #expect(history.map { $0["text"] as? String } == ["ship it", "lgtm"], "\(history)")
        #expect(history.last?["reply_to"] as? String == id, "\(history)")

        // `^` and `^2` name the newest and second newest messages from someone else, skipping bob's own "lgtm".
        try await post("second from alice", as: Self.alice, in: container)
        try await bot(as: Self.bob, in: container, join + """
            {"cmd":"reply","id":"^","text":"to the newest"}
            {"cmd":"reply","id":"^2","text":"to the one before"}

            """)
        let replies = try await read(as: Self.alice, in: container)
        let second = try #require(replies.first { $0["text"] as? String == "second from alice" }?["id"] as? String, "\(replies)")
        #expect(replies.first { $0["text"] as? String == "to the newest" }?["reply_to"] as? String == second, "\(replies)")
        #expect(replies.first { $0["text"] as? String == "to the one before" }?["reply_to"] as? String == id, "\(replies)")
    }

    /// Runs a `--json` bot as `user` on `input`, and returns its output objects.
    @discardableResult
    private func bot(as user: String, in container: String, _ input: String) async throws -> [[String: Any]] {
        let bot = try WorkerProcess("bot", executable: "fatchat", ["bot", "--container", container, "--json"],
                                    launcher: OSUsers.launcher(for: user), input: try WorkerProcess.input(input))
        #expect(try await bot.finish(timeout: .seconds(60)) == .success, "\(user): \(bot.errorText) \(bot.lines)")
        #expect(!bot.lines.contains { $0.contains(#""type":"error""#) }, "\(bot.lines)")
        return bot.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    private func read(as user: String, in container: String) async throws -> [[String: Any]] {
        let read = try WorkerProcess("read", executable: "fatchat", ["read", "--container", container, "general", "--last", "50", "--json"],
                                     launcher: OSUsers.launcher(for: user))
        #expect(try await read.finish(timeout: .seconds(60)) == .success, "\(read.errorText)")
        return read.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    private func post(_ text: String, as user: String, in container: String) async throws {
        let post = try WorkerProcess("post", executable: "fatchat", ["post", "--container", container, "general", text],
                                     launcher: OSUsers.launcher(for: user))
        #expect(try await post.finish(timeout: .seconds(60)) == .success, "\(user): \(post.errorText)")
    }

    private func logFiles(under logs: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: logs, includingPropertiesForKeys: nil).flatMap { account in
            try FileManager.default.contentsOfDirectory(at: account, includingPropertiesForKeys: nil).filter { $0.pathExtension == "log" }
        }
    }
}
