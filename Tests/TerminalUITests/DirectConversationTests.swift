import Foundation
import ProcessTestKit
import Testing
@testable import FatchatCore
@testable import RecordStore
import SyncEngine
@testable import TerminalUI

/// How `@user` entries are listed and drawn, without a container.
@Suite struct DirectConversationListTests {
    @Test func conversationsAreListedBelowTheChannelsWithTheirBadges() throws {
        var state = ClientViewState()
        state.channels = [
            ChannelItem(id: "channel.ops", name: "#ops", createdAt: Date(timeIntervalSince1970: 20)),
            ChannelItem(id: "@_1001_zed", name: "@zed", unreadCount: 3, hasMention: true, createdAt: .distantPast, isDirect: true),
            ChannelItem(id: "@_1002_amy", name: "@amy", createdAt: .distantPast, isDirect: true),
            ChannelItem(id: "channel.general", name: "#general", createdAt: Date(timeIntervalSince1970: 10), isCurrent: true),
        ]
        let lines = ClientRenderer.render(state, editor: LineEditor(), width: 80, height: 24, options: RenderOptions(usesColor: false)).lines
        let list = lines.dropFirst().prefix(4).map { String($0.split(separator: "│").first ?? "").trimmingCharacters(in: .whitespaces) }
        // Channels by creation, then the conversations in the order the screen gave (it sorts them by user name).
        #expect(list.map { $0.split(separator: " ").first.map(String.init) ?? "" } == ["#general", "#ops", "@zed", "@amy"], "\(lines)")
        #expect(list[2].hasSuffix("@3"), "a direct message counts as a mention: \(list)")
        #expect(list[3] == "@amy", "nothing unread, no badge: \(list)")
    }

    @Test func theRosterSortsConversationsByUserNameAndTellsTwinsApart() throws {
        var roster = ChannelRoster()
        let added = [roster.add(conversation: UserID(rawValue: "_1001_zed")), roster.add(conversation: UserID(rawValue: "_1003_Amy")),
                     roster.add(conversation: UserID(rawValue: "_1001_zed"))]
        #expect(added == [true, true, false], "once each")
        #expect(roster.conversations.map(\.rawValue) == ["_1003_Amy", "_1001_zed"])
        #expect(roster.label(UserID(rawValue: "_1001_zed")) == "@zed")
        roster.add(conversation: UserID(rawValue: "_2001_zed"))
        #expect(roster.label(UserID(rawValue: "_1001_zed")) == "@_1001_zed", "two accounts called zed (two hosts)")
        #expect(roster.label(UserID(rawValue: "_2001_zed")) == "@_2001_zed")

        let zed = UserID(rawValue: "_1001_zed")
        roster.directUnread[zed] = 2
        #expect(roster.activity(.conversation(zed)) == (2, true))
        roster.seen(conversation: zed)
        #expect(roster.activity(.conversation(zed)) == (0, false))
        #expect(roster.buffers == [.conversation(UserID(rawValue: "_1003_Amy")), .conversation(zed), .conversation(UserID(rawValue: "_2001_zed"))])
    }
}

/// The client's `@user` conversation, headless, with direct messages sent by a real OS user: the entry appears
/// with an unread count, opening it shows the history newest at the bottom a page at a time, a line typed there
/// is a sealed direct message, and a restart finds the conversation and what is unread in it again.
@Suite(.startsProcesses, .serialized, .enabled(if: OSUsers.available, "needs root to create the OS user fcdmalice"))
struct DirectConversationScreenTests {
    static let alice = "fcdmalice"
    static let group = "fcdmgroup"

    private static func aliceBot(_ container: String, _ lines: [String]) async throws -> WorkerProcess {
        try await GroupContainer.bot(alice, container, lines)
    }

    private static func client(_ container: String, data: URL) throws -> ChatClient {
        let opened = try Container(url: URL(fileURLWithPath: container), options: Container.Options(create: false, privateDataDirectory: data))
        var configuration = SyncEngine.Configuration()
        configuration.pollInterval = 0.1
        return try ChatClient(container: opened, handle: "ada", configuration: configuration)
    }

    /// Feeds the client's events to the screen until `done` holds, for at most `seconds`.
    private static func pump(_ client: ChatClient, into screen: ChatScreen, seconds: Double = 30, until done: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !done(), Date() < deadline {
            client.drainEvents().forEach(screen.handle)
            usleep(20_000)
        }
        return done()
    }

    private static func type(_ text: String, into screen: ChatScreen) {
        for character in text { screen.handle(.key(.character(character))) }
        screen.handle(.key(.enter))
    }

    private static func entry(_ screen: ChatScreen, _ name: String) -> ChannelItem? { screen.state.channels.first { $0.name == name } }

    /// A test's own key for root is new each time: alice forgets the last one, so that meeting it is no key change.
    private static func forgetKnownKeys() {
        try? FileManager.default.removeItem(atPath: "/home/\(alice)/.local/share/fatchat/known_keys")
    }

    @Test(arguments: ["sqlite", "log"])
    func aConversationIsListedCountedPagedAndWrittenTo(engine: String) async throws {
        let (root, container) = try await GroupContainer.make(users: [Self.alice], group: Self.group, arguments: ["--engine", engine])
        defer { try? FileManager.default.removeItem(at: root) }
        Self.forgetKnownKeys()
        let data = root.appendingPathComponent("root-data")
        let me = try Self.client(container, data: data)   // publishes my (root's) key, so alice can write to me
        var options = ChatScreen.Options()
        options.pageSize = 50
        let screen = try ChatScreen(client: me, width: 80, height: 24, options: options, renderOptions: RenderOptions(usesColor: false))
        screen.loadUnreadCounts()
        #expect(!screen.state.channels.contains { $0.isDirect }, "no conversation yet")
        me.start()

        let lines = (0..<120).map { "{\"cmd\":\"msg\",\"to\":\"root\",\"text\":\"dm \($0)\"}" }
        let sent = try await Self.aliceBot(container, lines)
        #expect(!sent.lines.contains { $0.contains("\"type\":\"error\"") } && !sent.errorText.contains("error"), "\(sent.lines) \(sent.errorText)")
        let label = "@\(Self.alice)"
        #expect(Self.pump(me, into: screen) { Self.entry(screen, label)?.unreadCount == 120 }, "\(screen.state.channels)")
        #expect(Self.entry(screen, label)?.hasMention == true)
        #expect(screen.state.banner?.text.contains("direct message from \(Self.alice)") == true, "\(String(describing: screen.state.banner))")
        #expect(!screen.state.messages.contains { $0.text.hasPrefix("dm ") }, "#general shows none of it")
        #expect(screen.render().lines.contains { $0.hasPrefix(label) && $0.contains("@120") }, "\(screen.render().lines)")

        // Alt-2 is the second entry: #general, then @alice.
        screen.handle(.key(.alt("2")))
        #expect(screen.state.title?.name == label)
        #expect(screen.state.messages.count == 50, "one page, not the whole conversation")
        #expect(screen.state.messages.last?.text == "dm 119", "newest at the bottom")
        #expect(screen.state.messages.first?.text == "dm 70")
        #expect(Self.entry(screen, label)?.unreadCount == 0 && Self.entry(screen, label)?.isCurrent == true)
        #expect(screen.render().lines.contains { $0.contains("<\(Self.alice)> dm 119") }, "\(screen.render().lines)")
        for _ in 0..<3 { screen.handle(.key(.pageUp)) }
        #expect(screen.state.messages.count == 100, "scrolling up loads one more page")
        #expect(screen.state.messages.first?.text == "dm 20")
        screen.handle(.key(.home))
        #expect(screen.state.messages.first?.text == "dm 0")
        screen.handle(.key(.end))
        #expect(screen.state.messages.last?.text == "dm 119")

        // A line typed here is a direct message to alice, shown at once as pending, then sent.
        Self.type("hello alice", into: screen)
        #expect(screen.state.messages.last?.text == "hello alice")
        #expect(screen.state.messages.last?.delivery == .pending)
        #expect(me.waitUntilSent(timeout: 20))
        #expect(Self.pump(me, into: screen) { screen.state.messages.last?.delivery == .sent })
        let reply = try await Self.aliceBot(container, ["{\"cmd\":\"query\",\"with\":\"root\"}"])
        #expect(reply.lines.contains { $0.contains("\"text\":\"hello alice\"") && $0.contains("\"type\":\"dm\"") }, "\(reply.lines)")
        #expect(try me.messages(in: ChannelName("general")).messages.isEmpty, "nothing went to a channel")

        // /del last deletes my newest direct message there, as in a channel.
        Self.type("/del last", into: screen)
        #expect(me.waitUntilSent(timeout: 20))
        #expect(Self.pump(me, into: screen) { !screen.state.messages.contains { $0.text == "hello alice" } })

        // One still queued (the engine is stopped) is deleted in the outbox, and leaves the view; /del by ID works too.
        me.stop()
        let peer = try #require(screen.session.conversation)
        Self.type("never sent", into: screen)
        #expect(screen.state.messages.last?.delivery == .pending)
        #expect(try me.outgoingDirectMessages(with: peer).map(\.message.text) == ["never sent"])
        Self.type("/del last", into: screen)
        #expect(try me.outgoingDirectMessages(with: peer).isEmpty)
        #expect(!screen.state.messages.contains { $0.text == "never sent" }, "\(screen.state.messages.suffix(3))")
        Self.type("not this one either", into: screen)
        let id = try #require(screen.state.messages.last?.id)
        Self.type("/del \(id.prefix(8))", into: screen)
        #expect(try me.outgoingDirectMessages(with: peer).isEmpty)
        #expect(screen.state.messages.last?.text == "dm 119", "\(screen.state.messages.suffix(3))")
        me.start()
        #expect(me.waitUntilSent(timeout: 20))

        // Two more while the client is closed: a restart lists the conversation with two unread.
        Self.type("/join general", into: screen)
        screen.handle(.key(.control("q")))
        me.stop()
        _ = try await Self.aliceBot(container, ["{\"cmd\":\"msg\",\"to\":\"root\",\"text\":\"are you there?\"}",
                                                "{\"cmd\":\"msg\",\"to\":\"root\",\"text\":\"ping\"}"])
        let again = try Self.client(container, data: data)
        let restarted = try ChatScreen(client: again, width: 80, height: 24, options: options, renderOptions: RenderOptions(usesColor: false))
        restarted.loadUnreadCounts()
        // A log container's cache catches up once the engine runs; the start reports what came meanwhile, counted once.
        again.start()
        defer { again.stop() }
        #expect(Self.pump(again, into: restarted) { Self.entry(restarted, label)?.unreadCount == 2 }, "\(restarted.state.channels)")
        _ = Self.pump(again, into: restarted, seconds: 1) { false }
        #expect(Self.entry(restarted, label)?.unreadCount == 2, "no message counted twice: \(restarted.state.channels)")
        Self.type("/query \(Self.alice)", into: restarted)
        #expect(restarted.state.messages.last?.text == "ping")
        #expect(restarted.state.messages.first { $0.id == restarted.state.firstUnreadMessageID }?.text == "are you there?",
                "the unread marker goes above the first one not read")
    }

    @Test func aLineToSomeoneWithoutAPublishedKeySaysSoAndIsKept() async throws {
        let (root, container) = try await GroupContainer.make(users: [Self.alice], group: Self.group)
        defer { try? FileManager.default.removeItem(at: root) }
        Self.forgetKnownKeys()
        let me = try Self.client(container, data: root.appendingPathComponent("root-data"))
        let screen = try ChatScreen(client: me, width: 80, height: 24, renderOptions: RenderOptions(usesColor: false))
        me.start()
        defer { me.stop() }
        _ = try await Self.aliceBot(container, ["{\"cmd\":\"msg\",\"to\":\"root\",\"text\":\"hi\"}"])
        #expect(Self.pump(me, into: screen) { Self.entry(screen, "@\(Self.alice)") != nil })
        Self.type("/query \(Self.alice)", into: screen)
        #expect(screen.state.messages.last?.text == "hi")

        // alice's key goes away (as if she never ran here): what is typed to her is refused, and kept.
        let keys = container + "/keys/"
        let published = try #require(try FileManager.default.contentsOfDirectory(atPath: keys).first { $0.hasSuffix("_\(Self.alice).pub") })
        try FileManager.default.moveItem(atPath: keys + published, toPath: root.path + "/" + published)
        Self.type("are you still there?", into: screen)
        #expect(screen.editor.text == "are you still there?", "nothing typed is lost")
        #expect(screen.state.messages.last?.isNotice == true)
        #expect(screen.state.messages.last?.text.contains("has published a key") == true, "\(screen.state.messages.last?.text ?? "")")
        #expect(try me.outgoingDirectMessages(with: UserID(rawValue: screen.session.conversation?.rawValue ?? "")).isEmpty)
    }
}
