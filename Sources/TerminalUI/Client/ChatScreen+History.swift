import FatchatCore
import Foundation

/// The loaded slice of the current channel's history, and how to extend it.
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
    func item(_ message: Message, delivery: MessageItem.Delivery = .sent) -> MessageItem {
        var text = message.text
        if message.hasAttachment {
            text = "[\(message.attachmentType ?? "file") \(message.shortID)] " + text
        }
        var item = MessageItem(id: message.id.rawValue, time: message.date, handle: message.handle,
                               userID: message.sender?.rawValue ?? "", text: text, isEdited: message.edited, delivery: delivery)
        item.isUnverified = !message.verified
        return item
    }

    /// The newest page, scrolled to the bottom.
    func loadNewest() throws {
        guard let name = session.current else { return }
        let page = try client.messages(in: name, limit: options.pageSize)
        state.messages = page.messages.map { item($0) } + pendingItems(in: name)
        window = HistoryWindow(olderCursor: page.older, newerCursor: nil, atNewest: true)
        state.scroll = .bottom
        state.hasNewMessagesBelow = false
    }

    /// My messages still going out in this channel, shown as pending or failed.
    func pendingItems(in name: ChannelName) -> [MessageItem] {
        let outgoing = (try? client.outgoingMessages(in: name)) ?? []
        return outgoing.map { item($0.message, delivery: $0.failed ? .failed : .pending) }
    }

    /// The oldest page, for Home.
    func loadOldest() throws {
        guard let name = session.current else { return }
        let page = try client.messagesFromStart(in: name, limit: options.pageSize)
        state.messages = page.messages.map { item($0) }
        window = HistoryWindow(olderCursor: nil, newerCursor: page.newer, atNewest: page.newer == nil)
        if window.atNewest { state.messages += pendingItems(in: name) }
        state.scroll = state.messages.first.map { .anchored(messageID: $0.id, line: 0) } ?? .bottom
        state.hasNewMessagesBelow = false
    }

    /// Extends the slice by a page of older messages; the scroll anchor keeps the place.
    func loadOlderIfNeeded() {
        guard let name = session.current, let cursor = window.olderCursor,
              ClientRenderer.messageViewport(state, width: width, height: height, options: renderOptions).reachesOldest,
              let page = try? client.messages(in: name, limit: options.pageSize, older: cursor) else { return }
        if case .bottom = state.scroll, let first = state.messages.first {
            state.scroll = .anchored(messageID: first.id, line: 0)
        }
        state.messages.insert(contentsOf: page.messages.map { item($0) }, at: 0)
        window.olderCursor = page.older
    }

    /// Extends the slice by a page of newer messages when scrolled to its bottom.
    func loadNewerIfNeeded() {
        guard let name = session.current, !window.atNewest, let cursor = window.newerCursor,
              ClientRenderer.messageViewport(state, width: width, height: height, options: renderOptions).isAtBottom,
              let page = try? client.messagesFromStart(in: name, limit: options.pageSize, newer: cursor) else { return }
        let known = Set(state.messages.map(\.id))
        state.messages += page.messages.map { item($0) }.filter { !known.contains($0.id) }
        window.newerCursor = page.newer
        if page.newer == nil {
            window.atNewest = true
            state.messages += pendingItems(in: name)
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
              state.scroll == .bottom, let name = session.current,
              let page = try? client.messages(in: name, limit: keep),
              let first = page.messages.first?.id.rawValue else { return }
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
        scroll(up: up, lines: max(1, ClientRenderer.messageRows(width: width, height: height, showsMemberList: state.showsMemberList) - 1))
    }

    /// Scrolls by `lines` rows (the mouse wheel: a few at a time), loading pages as the view nears either end.
    func scroll(up: Bool, lines: Int) {
        loadOlderIfNeeded()
        state.scroll = ClientRenderer.scroll(state, by: up ? lines : -lines, width: width, height: height, options: renderOptions)
        if up { loadOlderIfNeeded() } else { loadNewerIfNeeded() }
        if state.scroll == .bottom, window.atNewest { state.hasNewMessagesBelow = false }
    }
}
