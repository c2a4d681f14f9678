import Foundation
import ProcessTestKit
import Testing

/// Issue 20 as two real OS users: a deleted channel takes every member's subscription with it, and its successor has no subscribers.
@Suite(.startsProcesses, .serialized, .enabled(if: OSUsers.available, "needs root to create the OS users fcsubalice and fcsubbob"))
struct ChannelSubscriptionTests {
    static let alice = "fcsubalice"
    static let bob = "fcsubbob"
    static let group = "fcsubgroup"

    private func sharedContainer() async throws -> (root: URL, container: String) {
        try await SharedContainerFixture.make(users: [Self.alice, Self.bob], group: Self.group)
    }

    @discardableResult
    private func fatchat(_ user: String, _ arguments: [String]) async throws -> WorkerProcess {
        try await SharedContainerFixture.fatchat(user, arguments)
    }

    /// Runs one SQL statement on the public database with the sqlite3 tool as `user` (root would leave root-owned WAL files behind).
    private func sqlite3(_ user: String, container: String, _ sql: String) async throws -> [String] {
        let script = "exec /usr/bin/sqlite3 \"$1/public.sqlite\" \"$2\""
        let process = try WorkerProcess("\(user) sqlite3", executable: "fatchat", [container, sql],
                                        launcher: OSUsers.launcher(for: user) + ["/bin/sh", "-c", script])
        #expect(try await process.finish(timeout: .seconds(60)) == .success, "\(process.errorText)")
        return process.lines
    }

    /// The subscription table as `owner|id` lines.
    private func subscriptionRows(_ user: String, container: String) async throws -> [String] {
        try await sqlite3(user, container: container, "SELECT owner || '|' || id FROM subscription ORDER BY 1")
    }

    private func notifications(_ process: WorkerProcess) -> [String] {
        SharedContainerFixture.objects(process).filter { $0["type"] as? String == "notification" }.compactMap { $0["text"] as? String }
    }

    @Test func aDeletedChannelsSubscriptionsGoForEveryoneAndItsSuccessorNotifiesNobody() async throws {
        let (root, container) = try await sharedContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        let available = FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")

        // 1. Both join #doomed (posting joins); bob also joins #lobby, the control.
        try await fatchat(Self.alice, ["post", "--container", container, "doomed", "first"])
        try await fatchat(Self.bob, ["post", "--container", container, "doomed", "second"])
        try await fatchat(Self.bob, ["post", "--container", container, "lobby", "here"])
        let before = try await fatchat(Self.bob, ["admin", "subscriptions", "--container", container])
        #expect(before.lines.contains { $0.hasPrefix("messages.doomed:") }, "\(before.lines) \(before.errorText)")
        if available {
            let rows = try await subscriptionRows(Self.bob, container: container)
            #expect(rows.filter { $0.hasSuffix("|messages.doomed") }.count == 2, "\(rows)")
        }

        // Bob's bot runs throughout, and has seen #doomed notify him: his engine holds the subscription.
        let (bot, input) = try SharedContainerFixture.runningBot(Self.bob, ["--container", container, "--json", "--join", "lobby"])
        defer { bot.killIfRunning() }
        #expect(await bot.waitForLines(1, timeout: .seconds(60)), "bob's bot started: \(bot.errorText)")
        // Its engine takes its starting point a moment after it starts; post again until one arrives.
        for attempt in 1...5 where !notifications(bot).contains(where: { $0.contains("warming up") }) {
            try await fatchat(Self.alice, ["post", "--container", container, "doomed", "warming up \(attempt)"])
            _ = await waitUntil(timeout: .seconds(10)) { notifications(bot).contains { $0.contains("warming up") } }
        }
        #expect(notifications(bot).contains { $0.hasPrefix("\(Self.alice): warming up") && $0.hasSuffix("(in #doomed)") },
                "\(bot.lines) \(bot.errorText)")

        // 2. Alice deletes #doomed: bob's subscription goes with it.
        let (deleting, deleter) = try SharedContainerFixture.runningBot(Self.alice, ["--container", container])
        deleter.fileHandleForWriting.write(Data("/delete doomed\n".utf8))
        try deleter.fileHandleForWriting.close()
        #expect(try await deleting.finish(timeout: .seconds(60)) == .success, "\(deleting.errorText)")
        let after = try await fatchat(Self.bob, ["admin", "subscriptions", "--container", container])
        #expect(!after.lines.contains { $0.hasPrefix("messages.doomed:") }, "\(after.lines)")
        #expect(after.lines.contains { $0.hasPrefix("messages.lobby:") }, "\(after.lines) \(after.errorText)")
        if available {
            let rows = try await subscriptionRows(Self.bob, container: container)
            #expect(!rows.contains { $0.hasSuffix("|messages.doomed") }, "\(rows)")
        }

        // 3. Alice makes #doomed again and posts; then posts to #lobby, which bob did join.
        try await fatchat(Self.alice, ["post", "--container", container, "doomed", "secret plans in the new doomed"])
        try await fatchat(Self.alice, ["post", "--container", container, "lobby", "control"])
        _ = await waitUntil(timeout: .seconds(60)) { notifications(bot).contains { $0.contains("control") } }
        #expect(notifications(bot).contains("\(Self.alice): control (in #lobby)"), "the control arrives: \(bot.lines) \(bot.errorText)")
        // The lobby post came after the doomed one in the change feed, so bob's engine has been past it.
        #expect(!notifications(bot).contains { $0.contains("secret plans") }, "\(notifications(bot))")

        try input.fileHandleForWriting.close()
        _ = try await bot.finish(timeout: .seconds(60))
        let subscriptions = try await fatchat(Self.bob, ["admin", "subscriptions", "--container", container])
        #expect(!subscriptions.lines.contains { $0.hasPrefix("messages.doomed:") }, "\(subscriptions.lines)")
        let check = try await fatchat(Self.bob, ["admin", "check", "--container", container])
        #expect(check.lines == ["ok"], "\(check.lines) \(check.errorText)")

        // A row that outlived its channel, written straight into the file: admin check names it.
        guard available else { return }
        _ = try await sqlite3(Self.bob, container: container, """
            INSERT INTO subscription (owner, id, body, parent_zone, parent_name, parent_created)
            VALUES ('_1_ghost', 'messages.gone', '{}', '_defaultZone', 'channel.gone', 1)
            """)
        let reported = try await fatchat(Self.bob, ["admin", "check", "--container", container])
        #expect(reported.lines.contains { $0.contains("messages.gone") && $0.contains("_1_ghost") && $0.contains("channel.gone") }, "\(reported.lines)")
        #expect(try await reported.finish(timeout: .seconds(10)) != .success)
    }
}
