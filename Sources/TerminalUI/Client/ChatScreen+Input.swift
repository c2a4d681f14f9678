import FatchatCore
import Foundation

extension ChatScreen {
    /// One key or paste from the terminal.
    public func handle(_ event: InputEvent) {
        lastBusy = Date()
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
        state.inputRows = editor.rowCount
    }

    /// Keys that belong to the client rather than the input line. Returns whether it took the key.
    private func handleClientKey(_ key: Key) -> Bool {
        guard let action = options.keys.action(for: key, inputIsEmpty: editor.text.isEmpty) else { return false }
        switch action {
        case .selectChannel(let index):
            let buffers = roster.buffers
            if index <= buffers.count { select(buffers[index - 1]) }
        case .nextChannel:
            switchChannel(by: 1)
        case .previousChannel:
            switchChannel(by: -1)
        case .nextActiveChannel:
            switchToActivity()
        case .jumpToReplyParent:
            jumpToReplyParent()
        case .jumpToUnread:
            jumpToUnread()
        case .pageUp:
            scrollPage(up: true)
        case .pageDown:
            scrollPage(up: false)
        case .scrollToOldest:
            do { try loadOldest() } catch { notice("error: \(Self.describe(error))") }
        case .scrollToNewest:
            do { try loadNewest() } catch { notice("error: \(Self.describe(error))") }
        case .toggleHelp:
            if state.showsHelp { state.showsHelp = false } else { showHelp() }
        case .dismiss:
            state.showsHelp = false
            state.banner = nil
        case .toggleMemberList:
            state.showsMemberList.toggle()
            followPresence(state.showsMemberList)
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
            guard offset < shown.count else { return }
            let entry = shown[offset]
            if entry.isDirect, let peer = roster.conversations.first(where: { "@" + $0.rawValue == entry.id }) {
                select(.conversation(peer))
            } else if let channel = roster.channels.first(where: { $0.id.rawValue == entry.id }) {
                select(channel.name)
            }
        }
    }

    private func completionCandidates() -> CompletionCandidates {
        CompletionCandidates(commands: CommandGrammar.entries.map { "/" + $0.name },
                             channels: roster.channels.map { "#" + $0.name.display },
                             handles: state.members.map(\.handle) + roster.conversations.map { AccountDirectory.accountName(of: $0.rawValue) })
    }

    // MARK: Channels and conversations

    func select(_ name: ChannelName) { select(.channel(name)) }

    func select(_ buffer: Buffer) {
        do {
            try open(buffer)
            if sync.lockedBuffer != nil {
                sync.lockedBuffer = nil
                describeWait()
            }
        } catch where Self.isLocked(error) {
            waitForLock(toShow: buffer)
        } catch {
            notice("error: \(Self.describe(error))")
        }
    }

    private func switchChannel(by step: Int) {
        let buffers = roster.buffers
        guard !buffers.isEmpty else { return }
        let index = shown.flatMap { buffers.firstIndex(of: $0) } ?? 0
        select(buffers[(index + step + buffers.count) % buffers.count])
    }

    /// Alt-A: the next channel or conversation with unread messages, mentions (and direct messages) first.
    private func switchToActivity() {
        let buffers = roster.buffers
        guard !buffers.isEmpty else { return }
        let index = shown.flatMap { buffers.firstIndex(of: $0) } ?? 0
        let order = (1...buffers.count).map { buffers[(index + $0) % buffers.count] }
        if let target = order.first(where: { roster.activity($0).mention }) ?? order.first(where: { roster.activity($0).unread > 0 }) {
            select(target)
        }
    }

    func quit() {
        if let shown { markRead(shown) }
        requests.quit = true
    }

    // MARK: Commands

    /// Enter: a command, or a message to the current channel or conversation. A multi-line paste is always a message.
    ///
    /// `/query USER` shows the conversation with USER. A direct message that cannot be sealed (USER has
    /// published no key) says why, and the line goes back into the input, so nothing typed is lost.
    func submit(_ line: String) {
        var command: Command?
        do {
            command = line.contains("\n") ? .post(channel: nil, text: line) : try CommandGrammar.parse(line)
            switch command {
            case .query(let user)?:
                select(.conversation(try client.resolveAccount(user)))
            case .deleteMessage(let reference)?:
                show(try session.run(.deleteMessage(message: reference)))
                dropUnqueuedLines()
            case let command?:
                show(try session.run(command))
            case nil:
                break
            }
        } catch {
            notice("error: \(Self.describe(error))")
            if Self.sendsDirectMessage(command, in: session), editor.text.isEmpty { editor.setText(line) }
        }
    }

    /// Lines shown as pending or failed that the outbox no longer sends (a `/del` replaced them there) leave the view.
    private func dropUnqueuedLines() {
        let queued = Set(pendingItems().map(\.id))
        state.messages.removeAll { $0.delivery != .sent && !queued.contains($0.id) }
    }

    /// Whether running `command` in `session` sends a direct message.
    private static func sendsDirectMessage(_ command: Command?, in session: ChatSession) -> Bool {
        switch command {
        case .directMessage?: true
        case .post(nil, _)?: session.conversation != nil
        default: false
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
            if let shown { select(shown) }
            notice(text)
        case .switched(let name, let created):
            select(name)
            notice(created ? "created #\(name.display) and joined it" : "joined #\(name.display)")
        case .left(let name, let next):
            roster.channels.removeAll { $0.name == name }
            if let next {
                select(next)
            } else {
                // Leaving a channel by name from a conversation leaves the conversation on screen.
                if session.conversation == nil {
                    roster.shown = nil
                    state.messages = []
                }
                refreshChannelList()
            }
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
        case .reactions(let message, let counts):
            let parts = counts.map { count in
                count.emoji + " " + zip(count.handles, count.users).map { ClientRenderer.sender(handle: $0, user: $1.rawValue, in: state) }
                    .joined(separator: ", ")
            }
            notice(parts.isEmpty ? "no reactions on \(message.shortID)" : "reactions on \(message.shortID): " + parts.joined(separator: " · "))
        case .highlights(let words, let note):
            state.highlightWords = words
            notice(note)
        case .searchResults(let text, let messages):
            notice(messages.isEmpty ? "no message matches \(text)" : "\(messages.count) match\(messages.count == 1 ? "" : "es") for \(text):")
            for message in messages {
                let sender = ClientRenderer.sender(handle: message.handle, user: message.sender?.rawValue ?? "", in: state)
                notice("#\(message.channelName) <\(sender)> \(message.text)  [\(message.shortID)]")
            }
        case .directMessageQueued(let message):
            if roster.add(conversation: message.to) { refreshChannelList() }
            guard message.to == session.conversation else {
                notice("to \(roster.label(message.to)): \(message.text)  [\(message.shortID)]")
                return
            }
            if !window.atNewest { try? loadNewest() }
            state.messages.removeAll { $0.id == message.id.rawValue }
            state.messages.append(item(message, delivery: .pending))
            state.scroll = .bottom
        case .conversation(let peer, _):
            // The client asks for a conversation by showing it (see `submit`); this is the bot's listing.
            select(.conversation(peer))
        case .help:
            showHelp()
        case .quit:
            quit()
        }
    }

    /// Shows the help overlay; its text is made the first time, not at start, where nobody reads it yet.
    private func showHelp() {
        if state.helpText.isEmpty { state.helpText = HelpText.text(with: options.keys) }
        state.showsHelp = true
    }
}
