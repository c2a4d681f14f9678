import FatchatCore
import Foundation

extension ChatScreen {
    /// The most pages Alt-R or Alt-U loads looking for a message before giving up.
    static let jumpPageLimit = 40

    /// Items for a page of messages, with their reply quotes and, in one query, their reactions.
    func items(_ messages: [Message]) -> [MessageItem] {
        let known = Dictionary(messages.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var items = messages.map { item($0, known: known) }
        let reactions = (try? client.reactions(to: messages.map(\.id))) ?? [:]
        for index in items.indices {
            items[index].reactions = Self.badges(reactions[MessageID(rawValue: items[index].id)] ?? [])
        }
        return items
    }

    static func badges(_ counts: [ReactionCount]) -> [ReactionBadge] {
        counts.map { ReactionBadge(emoji: $0.emoji, count: $0.count) }
    }

    /// How a reply shows the message it answers: from the page it came with, the loaded
    /// messages, or the shared file; a parent that is gone shows as deleted.
    func quote(of parent: MessageID, known: [MessageID: Message]) -> ReplyQuote {
        if let message = known[parent] { return ReplyQuote(message) }
        if let loaded = state.messages.first(where: { $0.id == parent.rawValue && !$0.isNotice }) {
            return ReplyQuote(parentID: loaded.id, handle: loaded.handle, userID: loaded.userID, text: loaded.text, isUnverified: loaded.isUnverified)
        }
        do {
            guard let message = try client.message(parent) else { return ReplyQuote(parentID: parent.rawValue, isDeleted: true) }
            return ReplyQuote(message)
        } catch {
            return ReplyQuote(parentID: parent.rawValue, handle: "?", text: "(not read: \(Self.describe(error)))")
        }
    }

    /// Someone reacted to a message, or took a reaction off: its counts are read again if it is loaded.
    func reactionsChanged(_ id: MessageID) {
        guard let index = state.messages.firstIndex(where: { $0.id == id.rawValue }),
              let counts = try? client.reactions(to: [id]) else { return }
        state.messages[index].reactions = Self.badges(counts[id] ?? [])
    }

    /// A message changed or went: the quotes of the replies to it follow.
    func parentChanged(_ id: MessageID, to message: Message?) {
        for index in state.messages.indices where state.messages[index].quote?.parentID == id.rawValue {
            state.messages[index].quote = message.map(ReplyQuote.init) ?? ReplyQuote(parentID: id.rawValue, isDeleted: true)
        }
    }

    /// Alt-R: shows the message that the newest reply on screen answers as the last one on screen,
    /// loading older pages until it is there; pressed again, it follows the replies further up.
    func jumpToReplyParent() {
        let viewport = ClientRenderer.messageViewport(state, width: width, height: height, options: renderOptions)
        let visible = Set(viewport.visible.map(\.messageID))
        guard let reply = state.messages.last(where: { visible.contains($0.id) && $0.quote != nil }), let quote = reply.quote else {
            notice("No reply on screen: Alt-R goes to the message the newest reply on screen answers.")
            return
        }
        guard !quote.isDeleted else {
            notice("The message that reply answers was deleted.")
            return
        }
        guard loadOlder(until: { $0.contains { $0.id == quote.parentID } }) else {
            notice("The message that reply answers is not in this channel's history as far back as \(Self.jumpPageLimit) pages.")
            return
        }
        state.scroll = ClientRenderer.scroll(state, endingAt: quote.parentID, width: width, height: height, options: renderOptions)
    }

    /// Alt-U: shows the "new messages" line at the top, loading older pages if it is further back.
    func jumpToUnread() {
        if let readUpTo = shown.flatMap({ roster.readUpTo[$0] }),
           state.messages.first(where: { !$0.isNotice }).map({ $0.time > readUpTo }) ?? false {
            // Everything loaded is new: where I left off is further back.
            _ = loadOlder(until: { $0.contains { !$0.isNotice && $0.time <= readUpTo } })
            findFirstUnread()
        }
        guard let id = state.firstUnreadMessageID, state.messages.contains(where: { $0.id == id }) else {
            notice("No new messages since you last read this channel.")
            return
        }
        state.scroll = .anchored(messageID: id, line: 0)
    }

    /// Marks the first message from someone else after where I had read when the channel opened.
    func findFirstUnread() {
        guard let shown, let readUpTo = roster.readUpTo[shown] else {
            state.firstUnreadMessageID = nil
            return
        }
        state.firstUnreadMessageID = state.messages.first {
            !$0.isNotice && $0.time > readUpTo && $0.userID != client.user.rawValue
        }?.id
    }

    /// Loads older pages until `found` holds for the loaded messages or the channel's start, at most
    /// ``jumpPageLimit`` pages; returns whether `found` holds.
    private func loadOlder(until found: ([MessageItem]) -> Bool) -> Bool {
        var pages = 0
        while !found(state.messages), pages < Self.jumpPageLimit, let cursor = window.olderCursor,
              let older = try? page(older: cursor, limit: options.pageSize) {
            if case .bottom = state.scroll, let first = state.messages.first {
                state.scroll = .anchored(messageID: first.id, line: 0)
            }
            state.messages.insert(contentsOf: older.items, at: 0)
            window.olderCursor = older.older
            pages += 1
        }
        return found(state.messages)
    }
}

extension ReplyQuote {
    init(_ message: Message) {
        self.init(parentID: message.id.rawValue, handle: message.handle, userID: message.sender?.rawValue ?? "",
                  text: message.text, isUnverified: !message.verified)
    }
}
