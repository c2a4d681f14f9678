import Foundation
import ProcessTestKit
import Testing

/// Issue 14's `@user` conversation in real clients, in tmux, between real OS users: alice writes to bob from
/// a bot; bob's client lists `@alice` with an unread count, opens it, reads the text and answers there;
/// carol's client, in the same container, lists nothing and shows nothing of it.
@Suite(.startsProcesses, .serialized, .enabled(if: TmuxSession.available && OSUsers.available, "needs tmux, and root to create OS users"))
struct DirectConversationTmuxTests {
    static let alice = "fcdmtalice"
    static let bob = "fcdmtbob"
    static let carol = "fcdmtcarol"
    static let group = "fcdmtgroup"

    private static func client(_ user: String, _ container: String) throws -> TmuxSession {
        let binary = try WorkerProcess.executable("fatchat").path
        return try TmuxSession(name: "fatchat-\(user)-\(UUID().uuidString.prefix(6))", width: 100, height: 30,
                               command: OSUsers.launcher(for: user) + ["TERM=xterm-256color", binary, "--container", container])
    }

    private static func aliceBot(_ container: String, _ line: String) async throws -> WorkerProcess {
        try await GroupContainer.bot(alice, container, [line])
    }

    /// The channel list's row that starts with `name`, up to the pane's edge, its words one space apart.
    private static func listRow(_ screen: String, _ name: String) -> String? {
        screen.split(separator: "\n").first { $0.hasPrefix(name) }
            .map { ($0.split(separator: "│").first ?? "").split(separator: " ").joined(separator: " ") }
    }

    @Test func bobSeesAliceInHisListAndCarolSeesNothing() async throws {
        let (root, container) = try await GroupContainer.make(users: [Self.alice, Self.bob, Self.carol], group: Self.group)
        defer { try? FileManager.default.removeItem(at: root) }
        // bob's and carol's clients publish their keys as they open the container.
        let bob = try Self.client(Self.bob, container)
        defer { bob.kill() }
        let carol = try Self.client(Self.carol, container)
        defer { carol.kill() }
        #expect(try await bob.waitFor("[#general]"), "\(bob.screen)")
        #expect(try await carol.waitFor("[#general]"), "\(carol.screen)")

        // The banner lasts 4 s from when bob's client got the message, which may be long before the bot
        // has ended: it is looked for from before the bot starts.
        let banner = bob.watch(for: "direct message from \(Self.alice)", timeout: .seconds(120))
        let sent = try await Self.aliceBot(container, "{\"cmd\":\"msg\",\"to\":\"\(Self.bob)\",\"text\":\"the code is swordfish-4711\"}")
        #expect(!sent.lines.contains { $0.contains("\"type\":\"error\"") } && !sent.errorText.contains("error"), "\(sent.lines) \(sent.errorText)")

        let entry = "@\(Self.alice)"
        #expect(try await bob.waitFor(entry), "\(bob.screen)")
        #expect(Self.listRow(try bob.capture(), entry) == "\(entry) @1", "one unread, as a mention: \(bob.screen)")
        #expect(try await banner.seen(), "a banner: \(bob.screen)")
        #expect(!(try bob.capture().contains("swordfish")), "not shown before it is opened")

        // Alt-2: #general, then @alice.
        try bob.press("M-2")
        #expect(try await bob.waitFor("<\(Self.alice)> the code is swordfish-4711"), "\(bob.screen)")
        #expect(try await bob.waitFor("[\(entry)]"), "the input line names the conversation: \(bob.screen)")
        #expect(Self.listRow(try bob.capture(), entry) == entry, "opening it clears the count: \(bob.screen)")

        // A line bob types there is a direct message to alice.
        try bob.type("got it, thanks")
        try bob.press("Enter")
        #expect(try await bob.waitFor("<\(Self.bob)> got it, thanks"), "\(bob.screen)")
        var answered = false
        for _ in 0..<20 where !answered {
            let query = try await Self.aliceBot(container, "{\"cmd\":\"query\",\"with\":\"\(Self.bob)\"}")
            answered = query.lines.contains { $0.contains("\"type\":\"dm\"") && $0.contains("got it, thanks") }
            if !answered { try await Task.sleep(for: .milliseconds(500)) }
        }
        #expect(answered, "alice reads bob's answer")

        // carol's client, in the same container all along, lists no conversation and shows none of it.
        try await Task.sleep(for: .seconds(1))
        let carolScreen = try carol.capture()
        #expect(!carolScreen.contains("@\(Self.alice)") && !carolScreen.contains("@\(Self.bob)"), "\(carolScreen)")
        #expect(!carolScreen.contains("swordfish") && !carolScreen.contains("got it"), "\(carolScreen)")
        #expect(!carolScreen.contains("direct message"), "\(carolScreen)")
    }
}
