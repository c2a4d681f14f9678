import Foundation
import Testing
@testable import FatchatCore
@testable import TerminalUI

/// The typing indicator and presence marks on the headless screen, fed the chat's events.
@Suite struct PresenceScreenTests {
    @Test func typingShowsForFiveSecondsInItsChannelOnly() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let screen = try ChatScreen(client: try sandbox.client(), width: 100, height: 20, renderOptions: RenderOptions(usesColor: false))
        let bob = UserID(rawValue: "_1002_bob")
        let now = Date()
        screen.handle(.typing(TypingNotice(user: bob, handle: "bob", channel: try ChannelName("ops"), at: now)))
        #expect(screen.state.status.typing.isEmpty, "typing in another channel is not shown here")
        // The 5 s run from when the screen got the notice, by its own clock: somewhere between these two.
        let before = Date()
        screen.handle(.typing(TypingNotice(user: bob, handle: "bob", channel: try ChannelName("general"), at: now)))
        let after = Date()
        #expect(screen.state.status.typing == "bob is typing…")
        #expect(screen.render().lines[18].contains("bob is typing…"))
        screen.tick(now: before + 4)
        #expect(screen.state.status.typing == "bob is typing…")
        screen.tick(now: after + 5.5)
        #expect(screen.state.status.typing.isEmpty, "gone 5 s after the last notice")
        // Old news (a notice written long ago, seen at start) is not shown at all.
        screen.handle(.typing(TypingNotice(user: bob, handle: "bob", channel: try ChannelName("general"), at: now - 60)))
        #expect(screen.state.status.typing.isEmpty)
        // Two typists, then the message of one of them ends theirs.
        screen.handle(.typing(TypingNotice(user: bob, handle: "bob", channel: try ChannelName("general"), at: Date())))
        screen.handle(.typing(TypingNotice(user: UserID(rawValue: "_1003_cy"), handle: "cy", channel: try ChannelName("general"), at: Date())))
        #expect(screen.state.status.typing == "bob and cy are typing…")
    }

    @Test func myOwnAwayShowsOnMyStatusLine() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let screen = try ChatScreen(client: try sandbox.client(), width: 100, height: 20, renderOptions: RenderOptions(usesColor: false))
        screen.handle(.paste("/away lunch"))
        screen.handle(.key(.enter))
        #expect(screen.state.status.away == "away: lunch")
        screen.handle(.paste("/away"))
        screen.handle(.key(.enter))
        #expect(screen.state.status.away.isEmpty, "/away alone toggles back")
        #expect(screen.state.messages.last?.text == "You are back.")
    }

    @Test func theMemberListMarksPresenceAndAStaleHeartbeatIsOffline() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let client = try sandbox.client()
        let screen = try ChatScreen(client: client, width: 100, height: 20, renderOptions: RenderOptions(usesColor: false))
        client.start()
        defer { client.stop() }
        _ = client.waitUntilSent(timeout: 10)
        screen.refreshMembers()
        #expect(screen.state.members.count == 1)
        // Shown, the list reads the presence there is now (the screen's own start said online), and follows it from then on.
        #expect(client.flushEphemeral(timeout: 10))
        screen.handle(.key(.function(2)))
        #expect(screen.state.showsMemberList)
        #expect(screen.state.members.first?.presence == .online)
        screen.handle(.presence(Presence(user: client.user, handle: "ada", state: .away, reason: "x", seen: Date())))
        #expect(screen.state.members.first?.presence == .away)
        screen.handle(.presence(Presence(user: client.user, handle: "ada", state: .online, seen: Date() - 200)))
        #expect(screen.state.members.first?.presence == .away, "an older heartbeat does not replace a newer one")
        screen.handle(.presence(Presence(user: client.user, handle: "ada", state: .online, seen: Date())))
        #expect(screen.state.members.first?.presence == .online)
        screen.tick(now: Date() + 200)
        #expect(screen.state.members.first?.presence == .offline, "no heartbeat for 150 s reads as offline")
        #expect(screen.render().lines.contains { $0.contains("○ ada") })
    }

    /// A quiet screen sleeps until its tick would change something: its own heartbeat, or, while the member
    /// list is shown, someone listed going stale. A due that came too late leaves a mark wrong; one too soon
    /// wakes the client for nothing.
    @Test func aQuietScreenTicksWhenItsHeartbeatIsDueOrSomeoneListedGoesStale() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let client = try sandbox.client()
        let screen = try ChatScreen(client: client, width: 100, height: 20, renderOptions: RenderOptions(usesColor: false))
        let beat = try #require(screen.session.beacon?.nextDue)
        let now = Date()
        #expect(beat > now && beat <= now + Presence.heartbeat, "the first heartbeat is due within a minute of the start")
        #expect(screen.nextTickDue(now: now) == beat)

        let bob = UserID(rawValue: "_1002_bob")
        let bobSeen = now - Presence.staleAfter + 10
        screen.handle(.presence(Presence(user: bob, handle: "bob", state: .online, seen: bobSeen)))
        #expect(screen.nextTickDue(now: now) == beat, "with the list hidden, nobody's staleness is shown")

        screen.handle(.key(.function(2)))
        #expect(screen.state.showsMemberList)
        screen.handle(.presence(Presence(user: bob, handle: "bob", state: .online, seen: bobSeen)))
        let stale = bobSeen + Presence.staleAfter
        #expect(screen.nextTickDue(now: now) == min(beat, stale), "bob goes stale in 10 s")
        let carol = UserID(rawValue: "_1003_carol")
        screen.handle(.presence(Presence(user: carol, handle: "carol", state: .offline, seen: now)))
        #expect(screen.nextTickDue(now: now) == min(beat, stale), "someone already offline changes nothing")

        // Once bob reads as offline, the next tick is the heartbeat's again.
        #expect(screen.nextTickDue(now: stale + 0.001) == beat)
    }
}
