import Foundation
import Testing
@testable import FatchatCore
@testable import RecordStore
@testable import TerminalUI

/// The banner for a message in another channel names its sender as message lines do:
/// a copied handle never reads bare, whatever alert the subscription rendered.
@Suite struct NotificationBannerTests {
    /// A notification for a message in #ops, with the alert the subscription renders, which shows the handle alone.
    private func raised(handle: String, creator: String, text: String) -> ChatEvent? {
        let notification = SubscriptionNotification(
            subscriptionID: "messages.ops", reason: .created, stoppedMatching: false,
            recordID: RecordID(recordName: "feedbeef00000002"), recordType: ChatSchema.messageType,
            fields: ["handle": .string(handle), "text": .string(text), "channelName": "ops"],
            creatorUserRecordID: RecordID(recordName: creator), alertText: "\(handle): \(text) (in #ops)", shouldBadge: true)
        return ChatEvent.from(.notification(notification)).first
    }

    private func makeScreen(_ sandbox: ChatScreenTests.Sandbox) throws -> ChatScreen {
        try ChatScreen(client: try sandbox.client(), width: 80, height: 24, renderOptions: RenderOptions(usesColor: false))
    }

    /// An idle client draws a frame only when a tick changed what is on screen: a banner that expired,
    /// a typist who stopped. Each quiet second would otherwise render and compare every line again.
    @Test func aTickSaysWhetherTheScreenChanged() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let screen = try makeScreen(sandbox)
        let start = Date()
        screen.tick(now: start)
        #expect(!screen.tick(now: start + 1), "nothing happened in a second")
        let quiet = screen.render().lines
        #expect(!screen.tick(now: start + 2))
        #expect(screen.render().lines == quiet, "a tick that says so changed nothing drawn")

        screen.handle(try #require(raised(handle: "alice", creator: "_1002_alice", text: "morning")))
        let raisedAt = Date()
        #expect(!screen.tick(now: raisedAt + 1), "the banner stays for 4 s")
        #expect(screen.tick(now: raisedAt + 5), "the banner expired")
        #expect(screen.state.banner == nil)
        #expect(!screen.tick(now: raisedAt + 6))

        let bob = UserID(rawValue: "_1002_bob")
        screen.handle(.typing(TypingNotice(user: bob, handle: "bob", channel: try ChannelName("general"), at: Date())))
        let typedAt = Date()
        #expect(!screen.tick(now: typedAt + 1))
        #expect(screen.tick(now: typedAt + 6), "bob's typing is no longer shown")
        #expect(screen.state.status.typing.isEmpty)
    }

    /// A client goes quiet, and ticks every few seconds, only once nothing on screen counts down and
    /// neither key nor message came for a while; someone's heartbeat does not keep it awake.
    @Test func aClientIsQuietOnlyWhenNothingCountsDown() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let screen = try makeScreen(sandbox)
        screen.tick()
        #expect(!screen.isQuiet(), "it just started")
        let later = Date() + ChatScreen.quietAfter + 1
        #expect(screen.isQuiet(now: later))

        let bob = UserID(rawValue: "_1002_bob")
        screen.handle(.presence(Presence(user: bob, handle: "bob", state: .online, seen: Date())))
        #expect(screen.isQuiet(now: later), "a heartbeat is not activity")

        screen.handle(try #require(raised(handle: "alice", creator: "_1002_alice", text: "morning")))
        #expect(!screen.isQuiet(now: Date() + ChatScreen.quietAfter + 1), "a banner waits to expire")
        screen.tick(now: Date() + ChatScreen.quietAfter + 1)
        #expect(screen.isQuiet(now: Date() + ChatScreen.quietAfter + 1))

        screen.handle(.typing(TypingNotice(user: bob, handle: "bob", channel: try ChannelName("general"), at: Date())))
        #expect(!screen.isQuiet(now: Date() + ChatScreen.quietAfter + 1), "bob's typing waits to expire")
        screen.tick(now: Date() + ChatScreen.quietAfter + 1)
        #expect(screen.isQuiet(now: Date() + ChatScreen.quietAfter + 1))

        screen.handle(.key(.character("x")))
        #expect(!screen.isQuiet(), "a key wakes it")
    }

    @Test func aBannerFromAnImpersonatorShowsTheAccount() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let screen = try makeScreen(sandbox)
        screen.handle(try #require(raised(handle: "alice", creator: "_1002_bob", text: "the root password please")))
        #expect(screen.state.banner?.text == "alice (bob): the root password please (in #ops)")
        let lines = screen.render().lines
        #expect(lines.contains { $0.contains("★ alice (bob): the root password please (in #ops)") }, "\(lines)")
        #expect(!lines.contains { $0.contains("★ alice:") })
    }

    @Test func aBannerLabelsAHandleThatCopiesSomeoneOnScreen() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let screen = try makeScreen(sandbox)
        // Someone on screen already goes by alice, so even the account alice's own banner shows it.
        screen.state.members.append(MemberItem(handle: "alice", userID: "_1002_bob"))
        screen.handle(try #require(raised(handle: "alice", creator: "_1001_alice", text: "morning")))
        #expect(screen.state.banner?.text == "alice (alice): morning (in #ops)")

        let other = ChatScreenTests.Sandbox()
        let alone = try makeScreen(other)
        alone.handle(try #require(raised(handle: "alice", creator: "_1001_alice", text: "morning")))
        #expect(alone.state.banner?.text == "alice: morning (in #ops)", "her own name, copied by nobody, stands alone")
    }
}
