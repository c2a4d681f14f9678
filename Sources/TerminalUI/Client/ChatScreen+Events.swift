import FatchatCore
import Foundation

extension ChatScreen {
    /// One event from the chat: new messages, edits, deletions, notifications, status.
    public func handle(_ event: ChatEvent) {
        switch event {
        case .presence, .status: break
        default: lastBusy = Date()
        }
        switch event {
        case .message(let message):
            handlePresence(event)
            receive(message)
        case .messageEdited(let message):
            receive(message)
        case .presence, .typing:
            handlePresence(event)
        case .messageDeleted(let id):
            state.messages.removeAll { $0.id == id.rawValue }
            parentChanged(id, to: nil)
        case .reactionsChanged(let id):
            reactionsChanged(id)
        case .channelChanged(let channel):
            if let index = roster.channels.firstIndex(where: { $0.id == channel.id }) {
                roster.channels[index] = channel
                refreshChannelList()
            }
        case .channelDeleted(let name, let id):
            channelDeleted(name: name, id: id)
        case .membersChanged(let channel):
            if channel == current?.id { refreshMembers() }
        case .notification(let notification):
            guard let channel = notification.channel, channel.lowercased() != session.current?.key else { return }
            let sender = ClientRenderer.sender(handle: notification.handle, user: notification.user, in: state)
            state.banner = Banner(text: notification.alert(sender: sender), expiresAt: Date().addingTimeInterval(options.bannerSeconds))
        case .sendFailed(let id, let reason):
            // The counts follow with the status that comes after the batch.
            mark(id, .failed)
            notice("not sent: \(reason) (it stays in the outbox)")
        case .sent(let id):
            mark(id, .sent)
        case .status(let status):
            state.status.pendingCount = status.pending
            state.status.failedCount = status.failed
            sync.waitingSince = status.waitingSince
            sync.state = status.online ? "online" : "offline: \(status.pending) queued"
            describeWait()
        case .reload:
            if let shown { select(shown) }
        case .damagedRowSkipped(let line), .keyChanged(let line):
            notice(line)
        case .directMessage(let message):
            receive(message)
        }
    }

    /// While a write or a channel's history is held up, the status line says so; `tick` keeps the count going.
    func describeWait(now: Date = Date()) {
        state.status.syncState = sync.describe(now: now)
    }

    private func mark(_ id: MessageID, _ delivery: MessageItem.Delivery) {
        if let index = state.messages.firstIndex(where: { $0.id == id.rawValue }) {
            state.messages[index].delivery = delivery
        }
    }

    /// A message arrived (or changed) in what is on screen: it replaces its copy, or joins the newest end.
    private func show(arrived arriving: MessageItem) {
        if let index = state.messages.firstIndex(where: { $0.id == arriving.id }) {
            var replaced = arriving
            replaced.delivery = state.messages[index].delivery == .failed ? .failed : .sent
            // Reactions are read with a page and when one changes, not with the message.
            replaced.reactions = state.messages[index].reactions
            state.messages[index] = replaced
        } else if window.atNewest {
            state.messages.append(arriving)
            if state.scroll != .bottom { state.hasNewMessagesBelow = true }
            letGoOfOldestIfMany()
        } else {
            state.hasNewMessagesBelow = true
        }
    }

    /// A direct message to or from me: shown if its conversation is, else counted unread (each is a mention)
    /// with a banner. A conversation not listed yet joins the list.
    private func receive(_ message: DirectMessage) {
        let peer = message.peer(of: client.user)
        let mine = message.from == client.user
        roster.add(conversation: peer)
        if peer == session.conversation {
            show(arrived: item(message))
            if !mine { refreshMembers() }
        } else if !mine {
            // Counted again from the file, not added to: a message reported twice (the feed delivers at least once,
            // and a start reports what came while away) is counted once.
            roster.directUnread[peer] = (try? client.unreadCount(conversation: peer)) ?? (roster.directUnread[peer] ?? 0) + 1
            let sender = ClientRenderer.sender(handle: message.handle, user: message.from.rawValue, in: state)
            state.banner = Banner(text: "direct message from \(sender)", expiresAt: Date().addingTimeInterval(options.bannerSeconds))
        }
        if !mine {
            runHook(sender: message.handle, user: message.from.rawValue, channel: "dm", text: message.text)
            if options.bellOnMention { requests.effects.append(.bell) }
            if options.desktopNotifications {
                let sender = ClientRenderer.sender(handle: message.handle, user: message.from.rawValue, in: state)
                requests.effects.append(.desktopNotification(title: "\(roster.label(peer)) <\(sender)>", body: message.text))
            }
        }
        refreshChannelList()
    }

    private func receive(_ message: Message) {
        guard let channel = roster.channels.first(where: { $0.id == message.channel }) else { return }
        let mine = message.sender == client.user
        if channel.name == session.current {
            show(arrived: item(message))
            parentChanged(message.id, to: message)
        } else if !mine {
            roster.unread[channel.id, default: 0] += 1
        }
        // Only the part of a message the client draws is searched for a mention, so a huge one costs no more.
        if !mine, mentionsMe(TextPrefix(message.text, limit: TextPrefix.messageBytes).shown) {
            if channel.name != session.current { roster.mentions.insert(channel.id) }
            if options.bellOnMention { requests.effects.append(.bell) }
            runHook(sender: message.handle, user: message.sender?.rawValue ?? "", channel: "#" + channel.name.display, text: message.text)
            if options.desktopNotifications {
                let sender = ClientRenderer.sender(handle: message.handle, user: message.sender?.rawValue ?? "", in: state)
                requests.effects.append(.desktopNotification(title: "#\(channel.name.display) <\(sender)>", body: message.text))
            }
        }
        refreshChannelList()
    }

    /// Whether text mentions my handle or one of my highlight words as a word (`ada`, `@ada`, `ada:`), ignoring case.
    func mentionsMe(_ text: String) -> Bool {
        MentionMatcher(handle: client.handle, highlights: state.highlightWords).matches(text)
    }

    private func channelDeleted(name: String, id: ChannelID) {
        let wasCurrent = current?.id == id
        roster.remove(id)
        guard wasCurrent else {
            refreshChannelList()
            return
        }
        if let next = roster.channels.first {
            select(next.name)
            notice("#\(name) was deleted; you are now in #\(next.name.display)")
        } else {
            roster.shown = nil
            state.messages = []
            state.members = []
            refreshChannelList()
            notice("#\(name) was deleted; /join a channel to go on")
        }
        state.banner = Banner(text: "#\(name) was deleted", expiresAt: Date().addingTimeInterval(options.bannerSeconds))
    }
}
