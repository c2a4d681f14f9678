import FatchatCore
import Foundation

/// The loaded slice of the current channel's (or conversation's) history, and how to extend it.
///
/// The slice is contiguous and grows a page at a time from whichever end the
/// user scrolls toward; the client never loads a whole channel.
struct HistoryWindow {
    /// Continues toward older messages; nil at the channel's start.
    var olderCursor: HistoryCursor?
    /// Continues toward newer messages; nil when the slice reaches the newest.
    var newerCursor: HistoryCursor?
    /// The slice ends with the channel's newest message, so live messages extend it.
    var atNewest = true
    /// The slice's size at which the client next tries to let go of its oldest messages.
    var letGoAt = 0
}

extension ChatScreen {
    /// `known`: messages loaded with this one, where its parent may be.
    func item(_ message: Message, delivery: MessageItem.Delivery = .sent, known: [MessageID: Message] = [:]) -> MessageItem {
        var text = message.text
        if message.hasAttachment {
            text = "[\(message.attachmentType ?? "file") \(message.shortID)] " + text
        }
        var item = MessageItem(id: message.id.rawValue, time: message.date, handle: message.handle,
                               userID: message.sender?.rawValue ?? "", text: text, isEdited: message.edited, delivery: delivery)
        item.isUnverified = !message.verified
        item.isAction = message.isAction
        item.quote = message.replyTo.map { quote(of: $0, known: known) }
        return item
    }

    /// A direct message as shown; its text is someone else's, drawn inert like any message.
    func item(_ message: DirectMessage, delivery: MessageItem.Delivery = .sent) -> MessageItem {
        var item = MessageItem(id: message.id.rawValue, time: message.date, handle: message.handle,
                               userID: message.from.rawValue, text: message.text, delivery: delivery)
        item.isUnverified = !message.verified
        return item
    }

    /// The page of what is shown that ends before `cursor`, or the newest; and where the next older page starts.
    func page(older cursor: HistoryCursor?, limit: Int) throws -> (items: [MessageItem], older: HistoryCursor?)? {
        switch shown {
        case .channel(let name)?:
            let page = try client.messages(in: name, limit: limit, older: cursor)
            return (items(page.messages), page.older)
        case .conversation(let peer)?:
            let page = try client.directMessages(with: peer, limit: limit, older: cursor)
            return (page.messages.map { item($0) }, page.older)
        case nil:
            return nil
        }
    }

    /// The page of what is shown that starts after `cursor`, or the oldest; and where the next newer page starts.
    private func page(newer cursor: HistoryCursor?) throws -> (items: [MessageItem], newer: HistoryCursor?)? {
        switch shown {
        case .channel(let name)?:
            let page = try client.messagesFromStart(in: name, limit: options.pageSize, newer: cursor)
            return (items(page.messages), page.newer)
        case .conversation(let peer)?:
            let page = try client.directMessagesFromStart(with: peer, limit: options.pageSize, newer: cursor)
            return (page.messages.map { item($0) }, page.newer)
        case nil:
            return nil
        }
    }

    /// The newest page, scrolled to the bottom.
    func loadNewest() throws {
        guard let page = try page(older: nil, limit: options.pageSize) else { return }
        state.messages = page.items + pendingItems()
        window = HistoryWindow(olderCursor: page.older, newerCursor: nil, atNewest: true)
        state.scroll = .bottom
        state.hasNewMessagesBelow = false
    }

    /// My messages still going out in what is shown, as pending or failed.
    func pendingItems() -> [MessageItem] {
        switch shown {
        case .channel(let name)?:
            let outgoing = (try? client.outgoingMessages(in: name)) ?? []
            return outgoing.map { item($0.message, delivery: $0.failed ? .failed : .pending) }
        case .conversation(let peer)?:
            let outgoing = (try? client.outgoingDirectMessages(with: peer)) ?? []
            return outgoing.map { item($0.message, delivery: $0.failed ? .failed : .pending) }
        case nil:
            return []
        }
    }

    /// The oldest page, for Home.
    func loadOldest() throws {
        guard let page = try page(newer: nil) else { return }
        state.messages = page.items
        window = HistoryWindow(olderCursor: nil, newerCursor: page.newer, atNewest: page.newer == nil)
        if window.atNewest { state.messages += pendingItems() }
        state.scroll = state.messages.first.map { .anchored(messageID: $0.id, line: 0) } ?? .bottom
        state.hasNewMessagesBelow = false
    }

    /// Extends the slice by a page of older messages; the scroll anchor keeps the place.
    func loadOlderIfNeeded() {
        guard let cursor = window.olderCursor,
              ClientRenderer.messageViewport(state, width: width, height: height, options: renderOptions).reachesOldest,
              let page = try? page(older: cursor, limit: options.pageSize) else { return }
        if case .bottom = state.scroll, let first = state.messages.first {
            state.scroll = .anchored(messageID: first.id, line: 0)
        }
        state.messages.insert(contentsOf: page.items, at: 0)
        window.olderCursor = page.older
    }

    /// Extends the slice by a page of newer messages when scrolled to its bottom.
    func loadNewerIfNeeded() {
        guard !window.atNewest, let cursor = window.newerCursor,
              ClientRenderer.messageViewport(state, width: width, height: height, options: renderOptions).isAtBottom,
              let page = try? page(newer: cursor) else { return }
        let known = Set(state.messages.map(\.id))
        state.messages += page.items.filter { !known.contains($0.id) }
        window.newerCursor = page.newer
        if page.newer == nil {
            window.atNewest = true
            state.messages += pendingItems()
            state.hasNewMessagesBelow = false
        }
    }

    /// Lets go of the oldest loaded messages once more than ``Options/maxLoadedMessages``
    /// are loaded while the newest end is shown. The slice then starts where the newest
    /// page of half that size starts, read again for its cursor; the notices and pending
    /// lines after that point stay. A client far behind the file has not loaded that
    /// page's first message yet: it tries again after as many more messages.
    func letGoOfOldestIfMany() {
        let keep = max(options.maxLoadedMessages / 2, options.pageSize)
        guard state.messages.count > max(options.maxLoadedMessages, window.letGoAt), window.atNewest,
              state.scroll == .bottom, let page = try? page(older: nil, limit: keep),
              let first = page.items.first?.id else { return }
        guard let start = state.messages.firstIndex(where: { $0.id == first }) else {
            window.letGoAt = state.messages.count + keep
            return
        }
        state.messages.removeFirst(start)
        window.olderCursor = page.older
        window.letGoAt = 0
    }

    /// PgUp and PgDn: a page of lines, loading more history at either end as needed.
    func scrollPage(up: Bool) {
        scroll(up: up, lines: max(1, ClientRenderer.messageRows(width: width, height: height, showsMemberList: state.showsMemberList,
                                                                inputRows: state.inputRows) - 1))
    }

    /// Scrolls by `lines` rows (the mouse wheel: a few at a time), loading pages as the view nears either end.
    func scroll(up: Bool, lines: Int) {
        loadOlderIfNeeded()
        state.scroll = ClientRenderer.scroll(state, by: up ? lines : -lines, width: width, height: height, options: renderOptions)
        if up { loadOlderIfNeeded() } else { loadNewerIfNeeded() }
        if state.scroll == .bottom, window.atNewest { state.hasNewMessagesBelow = false }
    }
}
