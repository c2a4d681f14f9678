import FatchatCore
import Foundation

/// Everything the full-screen client shows, as plain values; the client maps its core
/// state into this and hands it to ``ClientRenderer``.
public struct ClientViewState: Sendable, Equatable {
    /// Subscribed channels, which the list pane sorts by creation date, then my direct conversations (`@user`) in the order given.
    public var channels: [ChannelItem] = []
    /// The channel on screen, or nil before any is open.
    public var title: ChannelTitle?
    /// The loaded window of the current channel's messages, oldest first.
    public var messages: [MessageItem] = []
    /// The first message not yet read; a marker line goes above it.
    public var firstUnreadMessageID: String?
    /// Which part of the message lines is on screen.
    public var scroll: ScrollPosition = .bottom
    /// Messages arrived below the visible part while scrolled up.
    public var hasNewMessagesBelow = false
    /// My handle, whose mentions are highlighted.
    public var myHandle = ""
    /// My highlight words (`/highlight`), highlighted and alerting as my handle does.
    public var highlightWords: [String] = []
    /// Lines the input takes, 1 to ``InputView/maximumRows``; the message view gives them up.
    public var inputRows = 1
    /// The status line's contents.
    public var status = StatusInfo()
    /// A notification about another channel, shown until it expires.
    public var banner: Banner?
    /// Members of the current channel, shown when ``showsMemberList`` is on.
    public var members: [MemberItem] = []
    /// Whether the member list pane is wanted (it hides first when space is short).
    public var showsMemberList = false
    /// Whether the help overlay is open.
    public var showsHelp = false
    /// The help overlay's text, usually ``HelpText/bundled``.
    public var helpText = ""
    /// The time used for banner expiry.
    public var now = Date()

    /// Creates an empty state.
    public init() {}
}

/// One entry in the channel list.
public struct ChannelItem: Sendable, Equatable, Identifiable {
    /// A stable identifier (the channel's record name).
    public var id: String
    /// The name shown, e.g. `#general`.
    public var name: String
    /// Messages not yet read.
    public var unreadCount: Int
    /// Whether an unread message mentions me.
    public var hasMention: Bool
    /// When the channel was created; the list is in this order.
    public var createdAt: Date
    /// Whether this is the channel on screen.
    public var isCurrent: Bool
    /// Whether this is a direct conversation (`@user`), listed below the channels.
    public var isDirect: Bool

    /// Creates a channel entry.
    public init(id: String, name: String, unreadCount: Int = 0, hasMention: Bool = false, createdAt: Date, isCurrent: Bool = false,
                isDirect: Bool = false) {
        self.id = id
        self.name = name
        self.unreadCount = unreadCount
        self.hasMention = hasMention
        self.createdAt = createdAt
        self.isCurrent = isCurrent
        self.isDirect = isDirect
    }
}

/// The title line: the current channel's (or conversation's) name, topic and member count.
public struct ChannelTitle: Sendable, Equatable {
    /// The channel name.
    public var name: String
    /// The topic, possibly empty.
    public var topic: String
    /// How many members the channel has.
    public var memberCount: Int

    /// Creates a title.
    public init(name: String, topic: String = "", memberCount: Int = 0) {
        self.name = name
        self.topic = topic
        self.memberCount = memberCount
    }
}

/// One message as shown.
public struct MessageItem: Sendable, Equatable, Identifiable {
    /// Whether a message of mine reached the shared database.
    public enum Delivery: Sendable, Equatable {
        /// Saved to the public database.
        case sent
        /// Still in the outbox.
        case pending
        /// Gave up; shown with a mark so the user can resend.
        case failed
    }

    /// A stable identifier (the record name).
    public var id: String
    /// When the message was posted.
    public var time: Date
    /// The sender's handle.
    public var handle: String
    /// The sender's user id; the handle's colour is hashed from it.
    public var userID: String
    /// The start of the text, untrusted: at most ``TextPrefix/messageBytes`` of it, sanitized
    /// when drawn. May hold newlines.
    public private(set) var text: String
    /// UTF-8 bytes of the text left out of ``text``; the view says how much more there is.
    public private(set) var omittedBytes: Int
    /// Whether the message was edited after posting.
    public var isEdited: Bool
    /// Delivery state of my own messages.
    public var delivery: Delivery
    /// A line from the client itself (`<*> joined #general`), which no account sent.
    public var isNotice: Bool
    /// Whether the sender's key does not vouch for the message (unsigned, or signed wrongly): drawn as `?<handle>`.
    public var isUnverified = false
    /// An action (`/me`): drawn as `* handle text`.
    public var isAction = false
    /// The message this one answers, drawn as a quoted line above it.
    public var quote: ReplyQuote?
    /// Reactions, drawn after the text as `👍 3`.
    public var reactions: [ReactionBadge] = []

    /// Creates a message; only the first ``TextPrefix/messageBytes`` of `text` are kept, so
    /// that a huge message costs no more to hold, wrap or draw than that.
    public init(id: String, time: Date, handle: String, userID: String, text: String, isEdited: Bool = false,
                delivery: Delivery = .sent, isNotice: Bool = false) {
        let prefix = TextPrefix(text, limit: TextPrefix.messageBytes)
        self.id = id
        self.time = time
        self.handle = handle
        self.userID = userID
        self.text = prefix.shown
        self.omittedBytes = prefix.omittedBytes
        self.isEdited = isEdited
        self.delivery = delivery
        self.isNotice = isNotice
    }
}

/// The message a reply answers, as its quoted first line shows it: `↳ <alice> first words…`.
public struct ReplyQuote: Sendable, Equatable {
    /// The parent's ID, to jump to it.
    public var parentID: String
    /// The parent's handle; empty when the parent is deleted.
    public var handle: String
    /// The parent's account, which labels the handle as in message lines.
    public var userID: String
    /// The start of the parent's text, untrusted; sanitized and cut to the width when drawn.
    public var text: String
    /// Whether the parent's sender's key does not vouch for it.
    public var isUnverified: Bool
    /// The parent was deleted (or never reached this client): drawn as `↳ (deleted message)`.
    public var isDeleted: Bool

    /// Creates a quote; only the first 200 characters of `text` are kept.
    public init(parentID: String, handle: String = "", userID: String = "", text: String = "", isUnverified: Bool = false, isDeleted: Bool = false) {
        self.parentID = parentID
        self.handle = handle
        self.userID = userID
        self.text = String(text.prefix(200))
        self.isUnverified = isUnverified
        self.isDeleted = isDeleted
    }
}

/// One emoji after a message and how many reacted with it.
public struct ReactionBadge: Sendable, Equatable {
    /// The reaction, untrusted; sanitized when drawn.
    public var emoji: String
    /// How many accounts reacted with it.
    public var count: Int

    /// Creates a badge.
    public init(emoji: String, count: Int) {
        self.emoji = emoji
        self.count = count
    }
}

/// One entry of the member list pane.
public struct MemberItem: Sendable, Equatable {
    /// The member's handle.
    public var handle: String
    /// The member's user id, for the handle colour.
    public var userID: String
    /// Online, away or offline, when known.
    public var presence: PresenceState?

    /// Creates a member entry.
    public init(handle: String, userID: String, presence: PresenceState? = nil) {
        self.handle = handle
        self.userID = userID
        self.presence = presence
    }
}

/// The status line: who I am and how my outgoing messages fare.
public struct StatusInfo: Sendable, Equatable {
    /// My handle.
    public var handle: String
    /// Messages waiting in the outbox.
    public var pendingCount: Int
    /// Messages that could not be sent.
    public var failedCount: Int
    /// The sync state in words, e.g. `online` or `offline: 3 queued`.
    public var syncState: String
    /// Who is typing in the channel on screen, e.g. `ada is typing…`; empty when nobody is.
    public var typing = ""
    /// `away` or `away: lunch` while I am away; empty otherwise.
    public var away = ""

    /// Creates a status.
    public init(handle: String = "", pendingCount: Int = 0, failedCount: Int = 0, syncState: String = "") {
        self.handle = handle
        self.pendingCount = pendingCount
        self.failedCount = failedCount
        self.syncState = syncState
    }
}

/// A notification banner, e.g. for a message in another channel.
public struct Banner: Sendable, Equatable {
    /// The text: a notification's alert with its sender labelled as in message lines, or a note from the client.
    public var text: String
    /// When the banner stops showing.
    public var expiresAt: Date

    /// Creates a banner.
    public init(text: String, expiresAt: Date) {
        self.text = text
        self.expiresAt = expiresAt
    }
}

/// Which message lines are on screen.
public enum ScrollPosition: Sendable, Equatable {
    /// Following the newest message.
    case bottom
    /// Scrolled up: the top line on screen is line `line` of the message `messageID`'s
    /// wrapped lines. Anchoring to a message keeps the place when a resize re-wraps.
    case anchored(messageID: String, line: Int)
}
