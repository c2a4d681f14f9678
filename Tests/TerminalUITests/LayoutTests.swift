import FatchatCore
import Foundation
import Testing
@testable import TerminalUI

@Suite struct LayoutTests {
    let utc = TimeZone(identifier: "UTC") ?? .current

    func sampleState(messages count: Int = 3) -> ClientViewState {
        var state = ClientViewState()
        let t0 = Date(timeIntervalSince1970: 1_700_000_000)   // 22:13 UTC
        state.channels = [
            ChannelItem(id: "b", name: "#random", unreadCount: 4, createdAt: t0.addingTimeInterval(10)),
            ChannelItem(id: "a", name: "#general", createdAt: t0, isCurrent: true),
            ChannelItem(id: "c", name: "#ops", hasMention: true, createdAt: t0.addingTimeInterval(20)),
        ]
        state.title = ChannelTitle(name: "#general", topic: "all things", memberCount: 2)
        state.myHandle = "me"
        state.status = StatusInfo(handle: "me", pendingCount: 2, failedCount: 1, syncState: "offline: 3 queued")
        state.members = [MemberItem(handle: "me", userID: "_1001_me"), MemberItem(handle: "alice", userID: "_1002_alice")]
        state.messages = (0..<count).map {
            MessageItem(id: "m\($0)", time: t0.addingTimeInterval(Double($0) * 60), handle: "alice", userID: "_1002_alice", text: "message \($0)")
        }
        return state
    }

    func render(_ state: ClientViewState, _ width: Int, _ height: Int, color: Bool = true) -> Screen {
        ClientRenderer.render(state, editor: LineEditor(), width: width, height: height,
                              options: RenderOptions(usesColor: color, timeZone: utc))
    }

    @Test func fullLayoutAt80x24() {
        let screen = render(sampleState(), 80, 24)
        #expect(screen.text(row: 0).hasPrefix(" #general — all things"))
        #expect(screen.text(row: 0).hasSuffix("2 members"))
        // Channel list in creation order, badges on the right of the pane.
        #expect(screen.text(row: 1).hasPrefix("#general        │"))
        #expect(screen.text(row: 2).hasPrefix("#random        4│"))
        #expect(screen.text(row: 3).hasPrefix("#ops           @│"))
        // Messages sit at the bottom of the view, right of the separator.
        #expect(screen.text(row: 21) == "                │22:15 <alice> message 2")
        #expect(screen.text(row: 19) == "                │22:13 <alice> message 0")
        #expect(screen.text(row: 22) == " [me] · 2 pending · 1 failed · offline: 3 queued")
        #expect(screen.text(row: 23) == "[#general]")
        #expect(screen.cursor?.row == 23)
        #expect(screen.cursor?.column == 11)
        #expect(screen.cell(row: 1, column: 0)?.style.attributes.contains(.reverse) == true)
    }

    @Test func degradesAt40x12() {
        let screen = render(sampleState(), 40, 12)
        #expect(screen.width == 40 && screen.height == 12)
        #expect(screen.text(row: 0).hasPrefix(" #general — all things"))
        // No channel list: messages start at column 0.
        #expect(screen.text(row: 9) == "22:15 <alice> message 2")
        #expect(screen.text(row: 10).hasPrefix(" [me] · 2 pending"))
        #expect(!screen.lines.joined().contains("#random"))
    }

    @Test func memberListHidesFirstWhenNarrow() {
        var state = sampleState()
        state.showsMemberList = true
        let wide = render(state, 80, 24)
        #expect(wide.text(row: 1).hasSuffix("│alice"))
        #expect(wide.text(row: 2).hasSuffix("│me"))
        #expect(Layout(width: 80, height: 24, showsMemberList: true).memberList != nil)
        #expect(Layout(width: 70, height: 24, showsMemberList: true).memberList == nil)
        #expect(Layout(width: 70, height: 24, showsMemberList: true).channelList != nil)
        #expect(Layout(width: 59, height: 24, showsMemberList: false).channelList == nil)
        #expect(Layout(width: 59, height: 24, showsMemberList: true).memberList == nil)
    }

    @Test func handleColourIsStableAndNoColorRemovesIt() {
        let state = sampleState()
        let colored = render(state, 80, 24)
        let handleCell = colored.cell(row: 21, column: 17 + 6)
        #expect(handleCell?.grapheme == "<")
        #expect(handleCell?.style.foreground == HandleColor.of(userID: "_1002_alice"))
        #expect(HandleColor.of(userID: "_1002_alice") == HandleColor.of(userID: "_1002_alice"))
        #expect(HandleColor.fnv1a("a") == 0xE40C_292C)   // FNV-1a reference value
        let plain = render(state, 80, 24, color: false)
        #expect(plain.cells.allSatisfy { $0.style.foreground == nil && $0.style.background == nil })
        #expect(plain.cell(row: 21, column: 23)?.style.attributes.contains(.bold) == true)
        #expect(RenderOptions.fromEnvironment(["NO_COLOR": "1"]).usesColor == false)
        #expect(RenderOptions.fromEnvironment([:]).usesColor == true)
    }

    @Test func bannerShowsUntilItExpires() {
        var state = sampleState()
        state.now = Date(timeIntervalSince1970: 100)
        state.banner = Banner(text: "#random: alice: lunch?", expiresAt: Date(timeIntervalSince1970: 105))
        #expect(render(state, 80, 24).text(row: 1).contains("★ #random: alice: lunch?"))
        state.now = Date(timeIntervalSince1970: 106)
        #expect(!render(state, 80, 24).lines.joined().contains("lunch"))
    }

    @Test func helpOverlayShowsTheBundledText() {
        var state = sampleState()
        state.helpText = HelpText.bundled
        state.showsHelp = true
        let text = render(state, 80, 24).lines.joined(separator: "\n")
        #expect(text.contains("Keys:"))
        #expect(text.contains("Ctrl-N / Ctrl-P"))
        #expect(text.contains("┌"))
    }

    @Test func wideTextNeverOverflowsTheMessagePane() {
        var state = sampleState(messages: 0)
        state.showsMemberList = true
        state.messages = [MessageItem(id: "w", time: Date(), handle: "bob", userID: "3",
                                      text: String(repeating: "你好👨‍👩‍👧❤️", count: 20))]
        let screen = render(state, 80, 24)
        let layout = Layout(width: 80, height: 24, showsMemberList: true)
        guard let members = layout.memberList else { Issue.record("no member list"); return }
        for row in layout.messages.row..<layout.messages.row + layout.messages.height {
            #expect(screen.cell(row: row, column: members.column - 1)?.grapheme == "│")
        }
    }

    @Test func newMessagesBelowMarkerShowsOnlyWhileScrolledUp() {
        var state = sampleState(messages: 40)
        state.hasNewMessagesBelow = true
        #expect(!render(state, 80, 24).lines.joined().contains("new messages below"))
        state.scroll = ClientRenderer.scroll(state, by: 10, width: 80, height: 24)
        #expect(render(state, 80, 24).text(row: 21).contains("new messages below"))
    }
}

@Suite struct TinyScreenTests {
    @Test func everySmallSizeRendersWithoutCrashingOrOverflowing() {
        var state = ClientViewState()
        state.title = ChannelTitle(name: "#a-very-long-channel-name", topic: "topic", memberCount: 3)
        state.channels = [ChannelItem(id: "1", name: "#a", unreadCount: 12345, hasMention: true, createdAt: .init(), isCurrent: true)]
        state.messages = [MessageItem(id: "m", time: .init(), handle: "someone-with-a-long-handle", userID: "u",
                                      text: "你好 👨‍👩‍👧 text")]
        state.members = [MemberItem(handle: "x", userID: "u")]
        state.showsMemberList = true
        state.showsHelp = true
        state.helpText = "help"
        state.banner = Banner(text: "banner", expiresAt: .distantFuture)
        var editor = LineEditor()
        editor.setText("typed 你好")
        for width in 0...45 {
            for height in 0...14 {
                let screen = ClientRenderer.render(state, editor: editor, width: width, height: height)
                #expect(screen.lines.count == height)
                #expect(screen.lines.allSatisfy { DisplayWidth.of($0) <= width })
            }
        }
    }

    @Test func fillOutsideTheGridIsIgnored() {
        var screen = Screen(width: 4, height: 2)
        screen.fill(row: 5, column: 9, width: 3, height: 3, style: Style(attributes: [.reverse]))
        screen.restyle(row: 0, column: 7, width: 2) { $0.adding(.bold) }
        #expect(screen.cells.allSatisfy { $0.style == .plain })
    }
}
