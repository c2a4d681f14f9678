import FatchatCore
import Foundation

/// Who the screen knows to be around, and who is typing where, as the events said.
struct PresenceBoard {
    /// The newest presence of each account.
    private(set) var presences: [UserID: Presence] = [:]
    /// Who is typing, in which channel, and until when the indicator shows (by our clock).
    private(set) var typists: [UserID: (handle: String, channel: ChannelID, until: Date)] = [:]

    mutating func note(_ presence: Presence) {
        if let known = presences[presence.user], known.seen > presence.seen { return }
        presences[presence.user] = presence
    }

    /// A typing notice arrived at `now`: shown for ``TypingNotice/lasts`` seconds, if it is not old news.
    mutating func note(_ notice: TypingNotice, now: Date) {
        guard notice.isCurrent(at: now) else { return }
        typists[notice.user] = (notice.handle, notice.channel, now.addingTimeInterval(TypingNotice.lasts))
    }

    /// Their message arrived: they stopped typing it.
    mutating func stoppedTyping(_ user: UserID) { typists[user] = nil }

    /// When the next presence that reads as online or away goes stale, and so reads as offline; nil for none.
    func nextStale(now: Date) -> Date? {
        presences.values.lazy.filter { $0.state(at: now) != .offline }.map { $0.seen + Presence.staleAfter }.min()
    }

    /// Forgets the indicators that ran out.
    mutating func expire(now: Date) { typists = typists.filter { $0.value.until > now } }

    /// The handles typing in `channel` at `now`, sorted.
    func typing(in channel: ChannelID, now: Date) -> [(handle: String, user: UserID)] {
        typists.filter { $0.value.channel == channel && $0.value.until > now }
            .map { (handle: $0.value.handle, user: $0.key) }
            .sorted { $0.handle.lowercased() < $1.handle.lowercased() }
    }

    /// `ada is typing…`, `ada and bob are typing…`, `several people are typing…`; empty for nobody.
    static func sentence(_ labels: [String]) -> String {
        switch labels.count {
        case 0: ""
        case 1: "\(labels[0]) is typing…"
        case 2: "\(labels[0]) and \(labels[1]) are typing…"
        default: "several people are typing…"
        }
    }
}

extension ChatScreen {
    /// Presence and typing events: the member list, the status line and my own away mark follow.
    func handlePresence(_ event: ChatEvent) {
        switch event {
        case .presence(let presence):
            self.presence.note(presence)
        case .typing(let notice) where notice.user != client.user:
            self.presence.note(notice, now: Date())
        case .message(let message):
            if let sender = message.sender { self.presence.stoppedTyping(sender) }
        default:
            return
        }
        showPresence()
    }

    /// Others' presence is read only while the member list shows it: with a hundred people, reading every
    /// heartbeat was most of an idle client's work. Shown again, the list starts from what is there now.
    func followPresence(_ shown: Bool) {
        client.followPresence(shown)
        guard shown else { return }
        do {
            for presence in try client.allPresence().values { self.presence.note(presence) }
        } catch {
            notice("error: \(Self.describe(error))")
        }
        showPresence()
    }

    /// Puts what the board knows on screen: marks in the member list, who is typing here, and whether I am away.
    func showPresence(now: Date = Date()) {
        presence.expire(now: now)
        for index in state.members.indices {
            state.members[index].presence = presence.presences[UserID(rawValue: state.members[index].userID)]?.state(at: now)
        }
        let typing = current.map { presence.typing(in: $0.id, now: now) } ?? []
        state.status.typing = PresenceBoard.sentence(typing.map { ClientRenderer.sender(handle: $0.handle, user: $0.user.rawValue, in: state) })
        let mine = session.beacon?.current
        state.status.away = mine.map { $0.state == .away ? ($0.reason.isEmpty ? "away" : "away: \($0.reason)") : "" } ?? ""
    }

    /// A key in the input line: activity (an idle client is back), and typing when it edits a message in a channel.
    func noteKey(editing: Bool) {
        session.noteActivity()
        guard editing, !editor.text.isEmpty, !editor.text.hasPrefix("/") || editor.text.hasPrefix("//") else { return }
        session.noteTyping()
    }

    /// Runs `--notify-command` for a mention or a direct message, with the sender labelled as on screen.
    func runHook(sender handle: String, user: String, channel: String, text: String) {
        guard let hook else { return }
        hook.run(sender: ClientRenderer.sender(handle: handle, user: user, in: state), channel: channel, text: text)
    }
}
