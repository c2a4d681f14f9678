import Foundation
import ProcessTestKit
import Testing

/// Alice and Bob, two real OS users, share a container made by `fatchat init --group`.
@Suite(.startsProcesses, .serialized, .enabled(if: OSUsers.available, "needs root to create the OS users alice and bob"))
struct EndToEndTests {
    static let alice = "fatchat-alice"
    static let bob = "fatchat-bob"
    static let group = "fatchat-crew"

    /// A shared container in a fresh directory everyone can reach.
    private func sharedContainer() async throws -> (root: URL, container: String) {
        try await SharedContainerFixture.make(users: [Self.alice, Self.bob], group: Self.group)
    }

    /// Runs `fatchat ARGS` as `user` to the end.
    @discardableResult
    private func fatchat(_ user: String, _ arguments: [String], input: FileHandle? = nil) async throws -> WorkerProcess {
        try await SharedContainerFixture.fatchat(user, arguments, input: input)
    }

    /// The JSON objects a `--json` command printed.
    private func objects(_ process: WorkerProcess) -> [[String: Any]] {
        SharedContainerFixture.objects(process)
    }

    /// The first message in `channel` whose text passes `matches`, read again until one is there or 30 s pass.
    private func relayed(to channel: String, in container: String, _ matches: (String) -> Bool) async throws -> [String: Any]? {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let messages = objects(try await fatchat(Self.alice, ["read", "--container", container, channel, "--json"]))
            if let found = messages.first(where: { ($0["text"] as? String).map(matches) == true }) { return found }
            if ContinuousClock.now >= deadline { return nil }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    /// A bot that keeps running, with its stdin held open by the test.
    private func runningBot(_ user: String, _ arguments: [String]) throws -> (WorkerProcess, Pipe) {
        try SharedContainerFixture.runningBot(user, arguments)
    }

    @Test func aliceAndBobChat() async throws {
        let (root, container) = try await sharedContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        let mode = try FileManager.default.attributesOfItem(atPath: container)[.posixPermissions] as? Int
        #expect(mode.map { $0 & 0o2070 } == 0o2070, "setgid and group-writable")

        let post = try await fatchat(Self.alice, ["post", "--container", container, "general", "hi", "bob"])
        #expect(post.lines.isEmpty && post.errorText.isEmpty, "\(post.errorText)")
        try await fatchat(Self.bob, ["post", "--container", container, "general", "hello alice"])

        let read = try await fatchat(Self.alice, ["read", "--container", container, "general", "--json"])
        let messages = objects(read)
        #expect(messages.map { $0["text"] as? String } == ["hi bob", "hello alice"])
        #expect(messages.map { $0["from"] as? String } == [Self.alice, Self.bob])
        #expect((messages.first?["user"] as? String)?.hasSuffix("_\(Self.alice)") == true)

        let who = try await fatchat(Self.bob, ["who", "--container", container, "general"])
        #expect(Set(who.lines) == [Self.alice, Self.bob])
        // Files SQLite made later are group-writable too.
        for file in try FileManager.default.contentsOfDirectory(atPath: container) where file.hasPrefix("public.sqlite") {
            let mode = try FileManager.default.attributesOfItem(atPath: container + "/" + file)[.posixPermissions] as? Int
            #expect(mode.map { $0 & 0o060 } == 0o060, "\(file) is group read-write")
        }
    }

    @Test func resetErasesEverythingAndReportsProgressInPlainLinesOffATerminal() async throws {
        let (root, container) = try await sharedContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        try await fatchat(Self.alice, ["post", "--container", container, "general", "one"])
        try await fatchat(Self.bob, ["post", "--container", container, "general", "two"])

        let reset = try await fatchat(Self.alice, ["admin", "reset", "--yes", "--container", container])
        #expect(reset.lines == ["Erased \(container)."], "\(reset.lines) \(reset.errorText)")
        // Stderr is a pipe here: the bar is plain lines, the last one saying every row went.
        let progress = reset.errorText.split(separator: "\n").map(String.init)
        let last = try #require(progress.last, "no progress on stderr")
        let counts = last.split(separator: " ").compactMap { Int($0) }
        #expect(last.hasPrefix("erased ") && counts.count == 2 && counts[0] == counts[1] && counts[0] >= 4, "\(reset.errorText)")
        #expect(!reset.errorText.contains("\r") && !reset.errorText.contains("["), "\(reset.errorText)")

        let read = try await fatchat(Self.bob, ["read", "--container", container, "general", "--json"])
        #expect(objects(read).isEmpty, "\(read.lines)")
    }

    @Test func bobCannotDeleteAlicesMessage() async throws {
        let (root, container) = try await sharedContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        try await fatchat(Self.alice, ["post", "--container", container, "general", "mine"])
        let id = try #require(objects(try await fatchat(Self.bob, ["read", "--container", container, "general", "--json"])).first?["id"] as? String)

        let (attempt, input) = try runningBot(Self.bob, ["--container", container, "--json"])
        input.fileHandleForWriting.write(Data("{\"cmd\":\"del\",\"id\":\"\(id.prefix(8))\"}\n{\"cmd\":\"edit\",\"id\":\"\(id.prefix(8))\",\"text\":\"defaced\"}\n".utf8))
        try input.fileHandleForWriting.close()
        #expect(try await attempt.finish(timeout: .seconds(60)) == .success)
        let errors = objects(attempt).filter { $0["type"] as? String == "error" }.compactMap { $0["text"] as? String }
        #expect(errors.count == 2)
        #expect(errors.allSatisfy { $0.contains("only") && $0.contains("your own messages") })

        let after = objects(try await fatchat(Self.alice, ["read", "--container", container, "general", "--json"]))
        #expect(after.map { $0["text"] as? String } == ["mine"])
    }

    @Test func deletingAChannelRemovesItForEveryoneAndARunningBotIsTold() async throws {
        let (root, container) = try await sharedContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        try await fatchat(Self.alice, ["post", "--container", container, "doomed", "first"])
        try await fatchat(Self.bob, ["post", "--container", container, "doomed", "second"])

        let (watcher, input) = try runningBot(Self.bob, ["--container", container, "--json", "--join", "doomed"])
        defer { watcher.killIfRunning() }
        #expect(await watcher.waitForLines(1, timeout: .seconds(30)), "bob's bot started: \(watcher.errorText)")

        // Alice's message reaches bob's running bot as a message and, through his subscription, a notification.
        try await fatchat(Self.alice, ["post", "--container", container, "doomed", "third"])
        let seen = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < seen, !objects(watcher).contains(where: { $0["type"] as? String == "notification" }) {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(objects(watcher).contains { $0["type"] as? String == "message" && $0["text"] as? String == "third" })
        let alert = objects(watcher).first { $0["type"] as? String == "notification" }
        #expect(alert?["text"] as? String == "\(Self.alice): third (in #doomed)")

        let (refused, refusedInput) = try runningBot(Self.bob, ["--container", container, "--json"])
        refusedInput.fileHandleForWriting.write(Data("{\"cmd\":\"delete\",\"channel\":\"doomed\"}\n".utf8))
        try refusedInput.fileHandleForWriting.close()
        _ = try await refused.finish(timeout: .seconds(60))
        #expect(objects(refused).contains { ($0["text"] as? String)?.contains("Only the creator") == true }, "\(refused.lines)")

        let (deleter, deleterInput) = try runningBot(Self.alice, ["--container", container])
        deleterInput.fileHandleForWriting.write(Data("/delete doomed\n".utf8))
        try deleterInput.fileHandleForWriting.close()
        #expect(try await deleter.finish(timeout: .seconds(60)) == .success, "\(deleter.errorText)")

        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, !objects(watcher).contains(where: { $0["type"] as? String == "channel_deleted" }) {
            try await Task.sleep(for: .milliseconds(50))
        }
        let deletion = objects(watcher).first { $0["type"] as? String == "channel_deleted" }
        #expect(deletion?["channel"] as? String == "doomed")
        try input.fileHandleForWriting.close()
        _ = try await watcher.finish(timeout: .seconds(30))

        let channels = try await fatchat(Self.bob, ["channels", "--container", container])
        #expect(!channels.lines.contains("#doomed"))
        for type in ["Message", "Membership"] {
            let rows = try await fatchat(Self.bob, ["admin", "query", "--container", container, type, "TRUEPREDICATE", "--json"])
            #expect(rows.lines.isEmpty, "\(type) left: \(rows.lines)")
        }
    }

    @Test func botsPipedTogether() async throws {
        let (root, container) = try await sharedContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        try await fatchat(Self.alice, ["post", "--container", container, "source", "warming up"])
        try await fatchat(Self.alice, ["post", "--container", container, "relay", "warming up"])
        // Bob's first bot prints #source; his second posts every line it reads to #relay.
        let input = Pipe()
        let script = "\"$0\" bot --container \"$1\" --join source | \"$0\" bot --container \"$1\" --join relay"
        let pipeline = try WorkerProcess("pipeline", executable: "fatchat", [container],
                                         launcher: OSUsers.launcher(for: Self.bob) + ["/bin/sh", "-c", script], input: input.fileHandleForReading)
        defer { pipeline.killIfRunning() }
        // The first bot says it joined #source once its engine runs; that line, relayed, shows the pipe is up.
        let joined = try await relayed(to: "relay", in: container) { $0.contains("Now talking in #source") }
        #expect(joined?["from"] as? String == Self.bob, "the pipeline started: \(pipeline.errorText)")
        try await fatchat(Self.alice, ["post", "--container", container, "source", "through the pipe"])

        let line = try await relayed(to: "relay", in: container) { $0.contains("through the pipe") }
        #expect(line?["text"] as? String != nil)
        #expect((line?["text"] as? String)?.contains("#source <\(Self.alice)> through the pipe") == true)
        #expect(line?["from"] as? String == Self.bob)
        try input.fileHandleForWriting.close()
        #expect(try await pipeline.finish(timeout: .seconds(60)) == .success, "\(pipeline.errorText)")
    }
}
