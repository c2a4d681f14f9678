// A demo of the full-screen client on fake state: no chat core, no database.
// `q` on an empty input line or Ctrl-C quits; Enter posts to the fake channel.
import Foundation
import TerminalUI

/// Fake channels and messages that exercise widths and sanitizing.
func demoState() -> ClientViewState {
    var state = ClientViewState()
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    state.channels = [
        ChannelItem(id: "c1", name: "#general", createdAt: start, isCurrent: true),
        ChannelItem(id: "c2", name: "#random", unreadCount: 3, createdAt: start.addingTimeInterval(60)),
        ChannelItem(id: "c3", name: "#日本語", unreadCount: 1, hasMention: true, createdAt: start.addingTimeInterval(120)),
    ]
    state.title = ChannelTitle(name: "#general", topic: "Fatchat demo", memberCount: 3)
    state.myHandle = "me"
    state.status = StatusInfo(handle: "me", pendingCount: 0, failedCount: 0, syncState: "online")
    state.members = [MemberItem(handle: "alice", userID: "_1001_alice"), MemberItem(handle: "bob", userID: "_1002_bob"),
                     MemberItem(handle: "me", userID: "_1000_me")]
    let texts: [(String, String, String)] = [
        ("alice", "_1001_alice", "Hello everyone, welcome to the demo frame"),
        ("bob", "_1002_bob", "你好世界 wide characters and 👨‍👩‍👧 family ❤️ heart"),
        ("alice", "_1001_alice", "an escape \u{1B}[2J sequence and a CR\r stay inert"),
        ("bob", "_1002_bob", "hey me, this mentions you"),
    ]
    state.messages = texts.enumerated().map { index, item in
        MessageItem(id: "m\(index)", time: start.addingTimeInterval(Double(index) * 60), handle: item.0, userID: item.1, text: item.2)
    }
    state.helpText = HelpText.bundled
    return state
}

var state = demoState()
var editor = LineEditor()
let candidates = CompletionCandidates(commands: ["/help", "/join", "/quit"], channels: state.channels.map(\.name),
                                      handles: state.members.map(\.handle))
do {
    let terminal = try CursesTerminal()
    let options = RenderOptions(usesColor: terminal.usesColor)
    func redraw(_ terminal: CursesTerminal) {
        let size = terminal.size
        state.now = Date()
        terminal.draw(ClientRenderer.render(state, editor: editor, width: size.width, height: size.height, options: options))
    }
    redraw(terminal)
    try MainLoop.run(terminal: terminal, eventDescriptor: nil) { event, terminal in
        guard case .input(let events) = event else {
            if case .terminate = event { return .stop }
            return .proceed
        }
        for input in events {
            let size = terminal.size
            if input == .key(.character("q")), editor.text.isEmpty { return .stop }
            if case .key(let key) = input, let action = ClientAction.forKey(key, inputIsEmpty: editor.text.isEmpty) {
                let page = ClientRenderer.messageRows(width: size.width, height: size.height, showsMemberList: state.showsMemberList)
                switch action {
                case .quit: return .stop
                case .resize, .redraw: terminal.invalidate()
                case .toggleHelp: state.showsHelp.toggle()
                case .dismiss: state.showsHelp = false
                case .toggleMemberList: state.showsMemberList.toggle()
                case .pageUp, .pageDown:
                    state.scroll = ClientRenderer.scroll(state, by: action == .pageUp ? page : -page, width: size.width, height: size.height)
                case .scrollToNewest: state.scroll = .bottom
                case .scrollToOldest: state.scroll = ClientRenderer.scroll(state, by: Int.max / 2, width: size.width, height: size.height)
                default: break
                }
                continue
            }
            if case .submit(let line) = editor.handle(input, candidates: candidates) {
                state.messages.append(MessageItem(id: UUID().uuidString, time: Date(), handle: "me", userID: "_1000_me", text: line))
            }
        }
        redraw(terminal)
        return .proceed
    }
} catch {
    FileHandle.standardError.write(Data("tuidemo: \(error)\n".utf8))
    exit(1)
}
