import FatchatCore
import Foundation

/// The channels the screen lists, and what it keeps per channel: unread counts, mentions, input histories.
struct ChannelRoster {
    /// The channels I am in, oldest first.
    var channels: [Channel] = []
    /// Messages from others not seen yet, per channel.
    var unread: [ChannelID: Int] = [:]
    /// Channels where someone mentioned me since I last looked.
    var mentions: Set<ChannelID> = []
    /// Each channel's sent lines, kept while another channel is on screen.
    var histories: [ChannelID: InputHistory] = [:]
    /// The channel whose messages are on screen; a command may already have made another one current.
    var shown: ChannelName?
    /// How far each channel was read when it was last opened: the "new messages" line goes after that.
    var readUpTo: [ChannelID: Date] = [:]

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
}

/// What the status line says of the sync: the chat's state, and any wait for the database.
struct SyncLine {
    /// Since when the chat's write to the shared file has been held up, if it is.
    var waitingSince: Date?
    /// The chat's state in words, for the status line when nothing is held up.
    var state = "connecting"
    /// The channel whose history a lock on the shared file kept from being read; retried every tick.
    var lockedChannel: ChannelName?

    /// The words for the status line at `now`.
    func describe(now: Date) -> String {
        if let waitingSince {
            return "waiting for the database: locked for \(max(0, Int(now.timeIntervalSince(waitingSince)))) s"
        }
        return lockedChannel != nil ? "waiting for the database: locked" : state
    }
}

/// What the screen asks of the app besides drawing a frame.
struct AppRequests {
    /// Effects not taken yet (bell, desktop notifications).
    var effects: [ChatScreen.Effect] = []
    /// Set once the user asked to quit.
    var quit = false
}
