import Foundation
import Testing
@testable import FatchatCore
@testable import RecordStore
@testable import TerminalUI

/// In the client, a handle that could pass for someone else shows its account, in the
/// messages, the member list and desktop notifications, and its colour is the account's.
@Suite struct SenderLabelTests {
    static let alice = "_1001_alice"
    static let bob = "_1002_bob"

    private func state() -> ClientViewState {
        var state = ClientViewState()
        state.members = [MemberItem(handle: "alice", userID: Self.alice), MemberItem(handle: "alice", userID: Self.bob)]
        state.messages = [
            MessageItem(id: "m1", time: Date(timeIntervalSince1970: 0), handle: "alice", userID: Self.alice, text: "morning"),
            MessageItem(id: "m2", time: Date(timeIntervalSince1970: 60), handle: "alice", userID: Self.bob, text: "send me the keys"),
            MessageItem(id: "m3", time: Date(timeIntervalSince1970: 120), handle: "*", userID: "", text: "joined #general", isNotice: true),
        ]
        state.showsMemberList = true
        return state
    }

    @Test func anImpersonatingHandleShowsItsAccountInTheColourOfTheAccount() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        let screen = ClientRenderer.render(state(), editor: LineEditor(), width: 100, height: 24, options: RenderOptions(timeZone: utc))
        let text = screen.lines.joined(separator: "\n")
        #expect(text.contains("00:01 <alice (bob)> send me the keys"), "\(screen.lines)")
        #expect(text.contains("00:00 <alice (alice)> morning"), "another account goes by alice, so hers shows too")
        #expect(text.contains("00:02 <*> joined #general"), "the client's own notices have no account")
        #expect(!text.contains("<alice>"))
        #expect(text.contains("│alice (alice)") && text.contains("│alice (bob)"), "the member list labels alike: \(screen.lines)")

        let row = try #require(screen.lines.firstIndex { $0.contains("send me the keys") })
        let column = try #require(screen.lines[row].range(of: "<alice (bob)>").map { screen.lines[row].distance(from: screen.lines[row].startIndex, to: $0.lowerBound) })
        #expect(screen.cell(row: row, column: column)?.style.foreground == HandleColor.of(userID: Self.bob))
        #expect(HandleColor.of(userID: Self.bob) != HandleColor.of(userID: Self.alice), "the test tells the two colours apart")
    }

    @Test func aDesktopNotificationNamesTheAccountOfAnImpersonator() throws {
        let sandbox = ChatScreenTests.Sandbox()
        var options = ChatScreen.Options()
        options.desktopNotifications = true
        let screen = try ChatScreen(client: try sandbox.client(), width: 80, height: 24, options: options, renderOptions: RenderOptions(usesColor: false))
        var record = Record(recordType: ChatSchema.messageType, recordID: RecordID(recordName: "feedbeef00000003"))
        record["channel"] = .reference(Reference(recordID: try ChannelName("general").recordID, action: .deleteSelf))
        record["text"] = "ada: the root password please"
        record["handle"] = "alice"
        record.creatorUserRecordID = RecordID(recordName: Self.bob)
        screen.handle(ChatEvent.message(try #require(Message(record))))
        #expect(screen.takeEffects() == [.desktopNotification(title: "#general <alice (bob)>", body: "ada: the root password please")])
    }

    @Test func searchResultsAndMemberListsInNoticesLabelTheSenderToo() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let client = try sandbox.client(handle: "alice")
        let screen = try ChatScreen(client: client, width: 100, height: 24, renderOptions: RenderOptions(usesColor: false))
        for character in "send me the keys" { screen.handle(.key(.character(character))) }
        screen.handle(.key(.enter))
        client.start()
        defer { client.stop() }
        #expect(client.waitUntilSent(timeout: 10))
        for character in "/search keys" { screen.handle(.key(.character(character))) }
        screen.handle(.key(.enter))
        for character in "/who" { screen.handle(.key(.character(character))) }
        screen.handle(.key(.enter))
        let me = UserIdentity.current.userName
        let notices = screen.state.messages.filter(\.isNotice).map(\.text)
        #expect(notices.contains { $0.hasPrefix("#general <alice (\(me))> send me the keys") }, "\(notices)")
        #expect(notices.contains { $0 == "#general: alice (\(me))" || $0 == "#general: alice (\(me)) [online]" }, "\(notices)")
    }
}
