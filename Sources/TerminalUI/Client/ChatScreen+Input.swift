import FatchatCore
import Foundation

extension ChatScreen {
    /// One key or paste from the terminal.
    public func handle(_ event: InputEvent) {
        if state.showsHelp {
            if case .key(let key) = event, [.escape, .function(1), .character("q"), .enter].contains(key) { state.showsHelp = false }
            return
        }
        if case .mouse(let mouse) = event { handleMouse(mouse); return }
        if case .key(let key) = event, handleClientKey(key) { noteKey(editing: false); return }
        switch editor.handle(event, candidates: completionCandidates()) {
        case .submit(let line):
            noteKey(editing: false)
            session.noteSent()
            submit(line)
            showPresence()
        case .edited:
            noteKey(editing: true)
        case .ignored:
            noteKey(editing: false)
        }
    }

    /// Keys that belong to the client rather than the input line. Returns whether it took the key.
    private func handleClientKey(_ key: Key) -> Bool {
        guard let action = ClientAction.forKey(key, inputIsEmpty: editor.text.isEmpty) else { return false }
        switch action {
        case .selectChannel(let index):
            if index <= roster.channels.count { select(roster.channels[index - 1].name) }
        case .nextChannel:
            switchChannel(by: 1)
        case .previousChannel:
            switchChannel(by: -1)
        case .nextActiveChannel:
            switchToActivity()
        case .pageUp:
            scrollPage(up: true)
        case .pageDown:
            scrollPage(up: false)
        case .scrollToOldest:
            do { try loadOldest() } catch { notice("error: \(Self.describe(error))") }
        case .scrollToNewest:
            do { try loadNewest() } catch { notice("error: \(Self.describe(error))") }
        case .toggleHelp:
            state.showsHelp.toggle()
        case .dismiss:
            state.showsHelp = false
            state.banner = nil
        case .toggleMemberList:
            state.showsMemberList.toggle()
        case .quit:
            quit()
        case .redraw, .resize:
            // The terminal's business: ClientApp repaints or asks for the new size.
            return false
        }
        return true
    }

    /// Rows one turn of the wheel scrolls.
    static let wheelLines = 3

    /// The wheel scrolls the messages; a press on a channel in the channel list switches to it.
    private func handleMouse(_ mouse: MouseEvent) {
        session.noteActivity()
        switch mouse.action {
        case .wheelUp: scroll(up: true, lines: Self.wheelLines)
        case .wheelDown: scroll(up: false, lines: Self.wheelLines)
        case .press:
            let layout = Layout(width: width, height: height, showsMemberList: state.showsMemberList)
            guard let list = layout.channelList, (list.row..<list.row + list.height).contains(mouse.row),
                  (list.column..<list.column + list.width).contains(mouse.column) else { return }
            let shown = ChannelListView.visible(state.channels, height: list.height)
            let offset = mouse.row - list.row
            guard offset < shown.count, let channel = roster.channels.first(where: { $0.id.rawValue == shown[offset].id }) else { return }
            select(channel.name)
        }
    }

    private func completionCandidates() -> CompletionCandidates {
        CompletionCandidates(commands: CommandGrammar.entries.map { "/" + $0.name },
                             channels: roster.channels.map { "#" + $0.name.display },
                             handles: state.members.map(\.handle))
    }

    // MARK: Channels

    func select(_ name: ChannelName) {
        do {
            try open(name)
            if sync.lockedChannel != nil {
                sync.lockedChannel = nil
                describeWait()
            }
        } catch where Self.isLocked(error) {
            waitForLock(toShow: name)
        } catch {
            notice("error: \(Self.describe(error))")
        }
    }

    private func switchChannel(by step: Int) {
        let channels = roster.channels
        guard !channels.isEmpty else { return }
        let index = channels.firstIndex { $0.name == session.current } ?? 0
        select(channels[(index + step + channels.count) % channels.count].name)
    }

    /// Alt-A: the next channel with unread messages, mentions first.
    private func switchToActivity() {
        let channels = roster.channels
        guard !channels.isEmpty else { return }
        let index = channels.firstIndex { $0.name == session.current } ?? 0
        let order = (1...channels.count).map { channels[(index + $0) % channels.count] }
        if let target = order.first(where: { roster.mentions.contains($0.id) }) ?? order.first(where: { (roster.unread[$0.id] ?? 0) > 0 }) {
            select(target.name)
        }
    }

    func quit() {
        if let name = session.current { markRead(name) }
        requests.quit = true
    }

    // MARK: Commands

    /// Enter: a command, or a message to the current channel. A multi-line paste is always a message.
    func submit(_ line: String) {
        do {
            let command: Command = line.contains("\n") ? .post(channel: nil, text: line) : try CommandGrammar.parse(line)
            show(try session.run(command))
        } catch {
            notice("error: \(Self.describe(error))")
        }
    }

    static func describe(_ error: any Error) -> String { ChatClient.describe(error) }

    private func show(_ result: CommandResult) {
        switch result {
        case .done:
            break
        case .queued(let message):
            guard message.channel == session.current?.id else { return }
            if !window.atNewest { try? loadNewest() }
            state.messages.removeAll { $0.id == message.id.rawValue }
            state.messages.append(item(message, delivery: .pending))
            state.scroll = .bottom
        case .info(let text):
            notice(text)
        case .outboxChanged(let text):
            // Pending and failed messages are shown from the outbox: show it again.
            if let name = session.current { select(name) }
            notice(text)
        case .switched(let name, let created):
            select(name)
            notice(created ? "created #\(name.display) and joined it" : "joined #\(name.display)")
        case .left(let name, let next):
            roster.channels.removeAll { $0.name == name }
            if let next { select(next) } else { state.messages = []; refreshChannelList() }
            notice("left #\(name.display)")
        case .channels(let all):
            notice("channels: " + all.map { "#" + $0.name.display }.joined(separator: " "))
        case .members(let name, let members):
            let now = Date()
            notice("#\(name.display): " + members.map { member in
                ClientRenderer.sender(handle: member.handle, user: member.user.rawValue, in: state)
                    + (member.presence.map { " [\($0.describe(at: now))]" } ?? "")
            }.joined(separator: " "))
        case .topic(let name, let topic):
            notice("topic of #\(name.display): \(topic.isEmpty ? "(none)" : topic)")
            if let index = roster.channels.firstIndex(where: { $0.name == name }) { roster.channels[index].topic = topic; refreshChannelList() }
        case .searchResults(let text, let messages):
            notice(messages.isEmpty ? "no message matches \(text)" : "\(messages.count) match\(messages.count == 1 ? "" : "es") for \(text):")
            for message in messages {
                let sender = ClientRenderer.sender(handle: message.handle, user: message.sender?.rawValue ?? "", in: state)
                notice("#\(message.channelName) <\(sender)> \(message.text)  [\(message.shortID)]")
            }
        case .directMessageQueued(let message):
            notice("to \(message.to.rawValue): \(message.text)  [\(message.shortID)]")
        case .conversation(let peer, let messages):
            notice(messages.isEmpty ? "no direct messages with \(peer.rawValue) yet" : "direct messages with \(peer.rawValue):")
            for message in messages {
                let sender = ClientRenderer.sender(handle: message.handle, user: message.from.rawValue, in: state)
                notice("\(message.verified ? "" : "?")<\(sender)> \(message.text)  [\(message.shortID)]")
            }
        case .help:
            state.showsHelp = true
        case .quit:
            quit()
        }
    }
}
