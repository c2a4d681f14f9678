import FatchatCore
import Foundation

/// What the message pane shows: a channel, or my direct conversation with one account (`@user`).
enum Buffer: Hashable {
    case channel(ChannelName)
    case conversation(UserID)
}

/// The channels and direct conversations the screen lists, and what it keeps per entry: unread counts,
/// mentions, input histories.
struct ChannelRoster {
    /// The channels I am in, oldest first.
    var channels: [Channel] = []
    /// Messages from others not seen yet, per channel.
    var unread: [ChannelID: Int] = [:]
    /// Channels where someone mentioned me since I last looked.
    var mentions: Set<ChannelID> = []
    /// Each channel's sent lines, kept while another channel is on screen.
    var histories: [ChannelID: InputHistory] = [:]
    /// My direct conversations, by account name; listed below the channels.
    var conversations: [UserID] = []
    /// Direct messages from the other side not seen yet, per conversation; each counts as a mention.
    var directUnread: [UserID: Int] = [:]
    /// Each conversation's sent lines.
    var conversationHistories: [UserID: InputHistory] = [:]
    /// The channel or conversation whose messages are on screen; a command (`/join`) may already
    /// have made another one current in the session.
    var shown: Buffer?
    /// How far each channel or conversation was read when it was last opened: the "new messages" line goes after that.
    var readUpTo: [Buffer: Date] = [:]

    /// Everything listed, in the list's order: the channels, then the conversations.
    var buffers: [Buffer] { channels.map { .channel($0.name) } + conversations.map { .conversation($0) } }

    /// Adds a channel the roster lacks, in order of creation.
    mutating func add(_ channel: Channel) {
        guard !channels.contains(where: { $0.id == channel.id }) else { return }
        channels.append(channel)
        channels.sort { $0.created < $1.created }
    }

    /// Forgets a channel and what was kept for it; its input history stays, should it come back.
    mutating func remove(_ id: ChannelID) {
        channels.removeAll { $0.id == id }
        unread[id] = nil
        mentions.remove(id)
    }

    /// The channel was looked at: nothing in it is unread any more.
    mutating func seen(_ id: ChannelID) {
        unread[id] = 0
        mentions.remove(id)
    }

    /// Adds a conversation the roster lacks, in order of user name (ignoring case); returns whether it was new.
    @discardableResult
    mutating func add(conversation peer: UserID) -> Bool {
        guard !conversations.contains(peer) else { return false }
        conversations.append(peer)
        conversations.sort { (AccountDirectory.accountName(of: $0.rawValue).lowercased(), $0.rawValue)
            < (AccountDirectory.accountName(of: $1.rawValue).lowercased(), $1.rawValue) }
        return true
    }

    /// The conversation was looked at.
    mutating func seen(conversation peer: UserID) { directUnread[peer] = 0 }

    /// Whether anything listed for `buffer` is unread, and whether that counts as a mention.
    func activity(_ buffer: Buffer) -> (unread: Int, mention: Bool) {
        switch buffer {
        case .channel(let name):
            guard let id = channels.first(where: { $0.name == name })?.id else { return (0, false) }
            return (unread[id] ?? 0, mentions.contains(id))
        case .conversation(let peer):
            let count = directUnread[peer] ?? 0
            return (count, count > 0)
        }
    }

    /// How a conversation is listed: `@alice`, or `@_1002_alice` when two conversations are with accounts of one name.
    func label(_ peer: UserID) -> String {
        let name = AccountDirectory.accountName(of: peer.rawValue)
        let shared = conversations.contains { $0 != peer && AccountDirectory.accountName(of: $0.rawValue).lowercased() == name.lowercased() }
        return "@" + (shared ? AccountDirectory.shown(peer.rawValue) : name)
    }
}

/// What the status line says of the sync: the chat's state, and any wait for the database.
struct SyncLine {
    /// Since when the chat's write to the shared file has been held up, if it is.
    var waitingSince: Date?
    /// The chat's state in words, for the status line when nothing is held up.
    var state = "connecting"
    /// The channel or conversation whose history a lock on the shared file kept from being read; retried every tick.
    var lockedBuffer: Buffer?

    /// The words for the status line at `now`.
    func describe(now: Date) -> String {
        if let waitingSince {
            return "waiting for the database: locked for \(max(0, Int(now.timeIntervalSince(waitingSince)))) s"
        }
        return lockedBuffer != nil ? "waiting for the database: locked" : state
    }
}

/// What the screen asks of the app besides drawing a frame.
struct AppRequests {
    /// Effects not taken yet (bell, desktop notifications).
    var effects: [ChatScreen.Effect] = []
    /// Set once the user asked to quit.
    var quit = false
}
