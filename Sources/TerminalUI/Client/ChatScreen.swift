import FatchatCore
import Foundation
import RecordStore

/// The full-screen client's brain: chat state in, a ``ClientViewState`` out.
///
/// It knows nothing of ncurses: ``ClientApp`` feeds it keys, chat events and
/// ticks, and draws what ``render()`` returns. Everything here runs on the
/// one thread that owns the terminal.
public final class ChatScreen {
    /// What the client does on a mention of my handle.
    public struct Options: Sendable {
        /// Ring the terminal bell.
        public var bellOnMention = false
        /// Send a desktop-notification escape (OSC 777 and OSC 9).
        public var desktopNotifications = false
        /// How long a banner stays.
        public var bannerSeconds = 4.0
        /// Messages loaded per page of history.
        public var pageSize = 50

        public init() {}
    }

    /// Something for the terminal to do besides drawing.
    public enum Effect: Equatable, Sendable {
        case bell
        case desktopNotification(title: String, body: String)
    }

    let client: ChatClient
    let session: ChatSession
    let options: Options
    let renderOptions: RenderOptions

    public internal(set) var state = ClientViewState()
    var editor = LineEditor()
    var histories: [RecordID: InputHistory] = [:]
    var channels: [Channel] = []
    var unread: [RecordID: Int] = [:]
    var mentions: Set<RecordID> = []
    var window = HistoryWindow()
    var memberHandles: [String] = []
    var effects: [Effect] = []
    var noticeCounter = 0
    /// Since when the engine's write to the shared file has been held up, if it is.
    var waitingSince: Date?
    /// The engine's state in words, for the status line when nothing is held up.
    var engineState = "connecting"
    /// The channel whose history a lock on the shared file kept from being read; retried every tick.
    var lockedChannel: ChannelName?
    public internal(set) var width: Int
    public internal(set) var height: Int
    /// Set once the user asked to quit.
    public internal(set) var wantsQuit = false

    /// Opens the client on the user's channels; on a first run it joins #general.
    public init(client: ChatClient, width: Int, height: Int, options: Options = Options(),
                renderOptions: RenderOptions = .fromEnvironment()) throws {
        self.client = client
        self.session = ChatSession(client: client)
        self.options = options
        self.renderOptions = renderOptions
        self.width = width
        self.height = height
        state.myHandle = client.handle
        state.status = StatusInfo(handle: client.handle, syncState: engineState)
        state.helpText = HelpText.bundled
        channels = try client.joinedChannels()
        if channels.isEmpty {
            let general = try ChannelName("general")
            try client.join(general)
            channels = [try client.existingChannel(general)]
        }
        if let first = channels.first { try open(first.name) }
        refreshStatusCounts()
    }

    /// Counts unread messages in every other channel; the app calls it after the first
    /// frame is on screen, so that startup does not grow with the number of channels.
    public func loadUnreadCounts() {
        for channel in channels where channel.name != session.current {
            unread[channel.recordID] = (try? client.unreadCount(channel.name)) ?? 0
        }
        refreshChannelList()
    }

    /// The frame to draw now.
    public func render() -> Screen {
        state.now = Date()
        return ClientRenderer.render(state, editor: editor, width: width, height: height, options: renderOptions)
    }

    /// Effects waiting since the last call (bell, desktop notifications).
    public func takeEffects() -> [Effect] {
        defer { effects.removeAll() }
        return effects
    }

    /// The terminal changed size: the text re-wraps, and the scroll anchor keeps the place.
    public func resize(width: Int, height: Int) {
        self.width = max(1, width)
        self.height = max(1, height)
    }

    /// A second passed: banners expire; the read marker follows what is on screen.
    public func tick(now: Date = Date()) {
        state.now = now
        if let banner = state.banner, banner.expiresAt <= now { state.banner = nil }
        retryLockedChannel()
        describeWait(now: now)
        markCurrentReadIfAtBottom()
    }

    // MARK: Channels

    /// The channel on screen.
    var current: Channel? { channels.first { $0.name == session.current } }

    /// Shows a channel: its newest page, title, members and where unread messages start.
    func open(_ name: ChannelName) throws {
        if let previous = session.current, previous != name {
            markRead(previous)
            histories[previous.recordID] = editor.history
        }
        session.select(name)
        let channel = try client.existingChannel(name)
        if !channels.contains(where: { $0.recordID == channel.recordID }) {
            channels.append(channel)
            channels.sort { $0.created < $1.created }
        }
        editor.history = histories[channel.recordID] ?? InputHistory()
        let lastRead = client.lastRead(name)
        window = HistoryWindow()
        try loadNewest()
        state.firstUnreadMessageID = state.messages.first {
            $0.time > (lastRead ?? .distantFuture) && $0.userID != client.user.recordName
        }?.id
        unread[channel.recordID] = 0
        mentions.remove(channel.recordID)
        refreshMembers()
        refreshChannelList()
        markRead(name)
    }

    func refreshChannelList() {
        state.channels = channels.map { channel in
            ChannelItem(id: channel.recordID.recordName, name: "#" + channel.name.display,
                        unreadCount: unread[channel.recordID] ?? 0, hasMention: mentions.contains(channel.recordID),
                        createdAt: channel.created, isCurrent: channel.name == session.current)
        }
        if let current {
            state.title = ChannelTitle(name: "#" + current.name.display, topic: current.topic, memberCount: state.members.count)
        } else {
            state.title = nil
        }
    }

    func refreshMembers() {
        guard let name = session.current, let members = try? client.members(of: name) else { return }
        memberHandles = members.map(\.handle)
        state.members = members.map { MemberItem(handle: $0.handle, userID: $0.user.recordName) }
        refreshChannelList()
    }

    func markRead(_ name: ChannelName) {
        guard name == session.current, let newest = state.messages.last(where: { !$0.id.hasPrefix(Self.noticePrefix) })?.time else { return }
        try? client.markRead(name, upTo: newest)
    }

    func markCurrentReadIfAtBottom() {
        guard let name = session.current, state.scroll == .bottom, window.atNewest else { return }
        markRead(name)
    }

    // MARK: Notices

    static let noticePrefix = "notice:"

    /// A line of information in the current channel, as IRC clients print them; not stored.
    func notice(_ text: String) {
        noticeCounter += 1
        state.messages.append(MessageItem(id: Self.noticePrefix + String(noticeCounter), time: Date(), handle: "*",
                                          userID: "", text: text, isNotice: true))
    }

    /// The status line's outbox counts, from the outbox itself.
    func refreshStatusCounts() {
        guard let entries = try? client.engine.outboxEntries() else { return }
        state.status.pendingCount = entries.filter { $0.state == .pending }.count
        state.status.failedCount = entries.count - state.status.pendingCount
    }
}
