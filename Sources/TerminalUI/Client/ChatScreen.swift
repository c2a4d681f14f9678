import FatchatCore
import Foundation

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
        /// The most messages the current channel keeps loaded while its newest end is shown;
        /// past this the oldest half is let go (scrolling up loads it again), so a client left
        /// open in a busy channel stays small and each arriving message stays cheap.
        public var maxLoadedMessages = 1000
        /// Seconds without a key before I show as away (`--auto-away`); `nil` never.
        public var autoAwayAfter: TimeInterval? = 600
        /// `--notify-command`: run for a mention of me or a direct message to me.
        public var notifyCommand: String?
        /// Which keys do what, after the configuration file's bindings.
        public var keys = KeyBindings.defaults
        /// The styles, after the configuration file's colours.
        public var theme = Theme()

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

    /// What is drawn: the renderer's whole input.
    public internal(set) var state = ClientViewState()
    var editor = LineEditor()
    var roster = ChannelRoster()
    /// Whether the list of my channels still waits to be read: the first frame opened the remembered channel alone.
    var channelListPending = false
    var window = HistoryWindow()
    var sync = SyncLine()
    var requests = AppRequests()
    /// Numbers the notices, which are not stored and so have no message ID.
    var noticeCounter = 0
    /// Who is around, and who is typing where.
    var presence = PresenceBoard()
    /// How far this run marked each channel or conversation read. A marker only moves forward, so a
    /// mark up to a date already reached reads and writes nothing: an idle client marks once a second.
    var markedUpTo: [Buffer: Date] = [:]
    /// When a key, or an event other than someone's presence, last came.
    var lastBusy = Date()
    /// Seconds after the last key or event before the client may go quiet.
    static let quietAfter: TimeInterval = 10
    /// The hook for mentions and direct messages, if one was given.
    let hook: NotifyHook?
    public internal(set) var width: Int
    public internal(set) var height: Int

    /// Set once the user asked to quit.
    public var wantsQuit: Bool { requests.quit }

    /// Opens the client on the user's channels; on a first run it joins #general.
    public init(client: ChatClient, width: Int, height: Int, options: Options = Options(),
                renderOptions: RenderOptions = .fromEnvironment()) throws {
        self.client = client
        self.session = ChatSession(client: client)
        self.options = options
        self.renderOptions = renderOptions
        self.width = width
        self.height = height
        hook = options.notifyCommand.map { NotifyHook(program: $0) }
        state.myHandle = client.handle
        state.highlightWords = client.highlightWords()
        state.status = StatusInfo(handle: client.handle, syncState: sync.state)
        if let remembered = client.rememberedChannel() {
            // The channel I left on screen opens first. The list of every channel I am in, most of
            // the first frame for a member of a thousand, follows it (`loadChannelList`).
            roster.channels = [remembered]
            channelListPending = true
        } else {
            roster.channels = try client.joinedChannels()
            if roster.channels.isEmpty {
                let general = try ChannelName("general")
                try client.join(general)
                roster.channels = [try client.existingChannel(general)]
            }
        }
        if let first = roster.channels.first { try open(.channel(first.name)) }
        session.startPresence(autoAwayAfter: options.autoAwayAfter)
        followPresence(state.showsMemberList)
    }

    /// Reads the list of my channels when the first frame went without it; the app calls it just
    /// after that frame, before `loadUnreadCounts`.
    public func loadChannelList() {
        guard channelListPending else { return }
        channelListPending = false
        do {
            let joined = try client.joinedChannels()
            let opened = roster.channels.filter { channel in !joined.contains { $0.id == channel.id } }
            roster.channels = joined
            for channel in opened { roster.add(channel) }
        } catch {
            notice("error: \(Self.describe(error))")
        }
        refreshChannelList()
    }

    /// Says I am offline as the client exits, waiting at most `timeout` seconds for it to be written,
    /// and remembers the channel on screen for the next start.
    public func finish(timeout: Double = 1) {
        if case .channel(let name)? = roster.shown { try? client.rememberShown(name) }
        session.stopPresence(timeout: timeout)
    }

    /// What the app loads once the first frame is on screen: the channel list, then the unread counts.
    /// Then the start-up's temporary memory (decoded pages of records, SQLite's pages) goes back to
    /// the system, as the client goes on to sit mostly idle.
    public func loadAfterFirstFrame() {
        loadChannelList()
        loadUnreadCounts()
        ProcessMemory.giveBackFreed()
    }

    /// Counts unread messages in every other channel and conversation, and lists my direct conversations;
    /// the app calls it after the first frame is on screen, so that startup does not grow with the number of channels.
    public func loadUnreadCounts() {
        for channel in roster.channels where channel.name != session.current {
            roster.unread[channel.id] = (try? client.unreadCount(channel.name)) ?? 0
        }
        for peer in (try? client.conversations()) ?? [] { roster.add(conversation: peer) }
        for peer in roster.conversations where peer != session.conversation {
            roster.directUnread[peer] = (try? client.unreadCount(conversation: peer)) ?? 0
        }
        refreshChannelList()
    }

    /// The frame to draw now.
    public func render() -> Screen {
        state.now = Date()
        state.inputRows = editor.rowCount
        return ClientRenderer.render(state, editor: editor, width: width, height: height, options: renderOptions)
    }

    /// Effects waiting since the last call (bell, desktop notifications).
    public func takeEffects() -> [Effect] {
        defer { requests.effects.removeAll() }
        return requests.effects
    }

    /// The terminal changed size: the text re-wraps, and the scroll anchor keeps the place.
    public func resize(width: Int, height: Int) {
        self.width = max(1, width)
        self.height = max(1, height)
    }

    /// A second passed: banners expire; the read marker follows what is on screen. Returns whether
    /// what is drawn changed, so that an idle client does not draw the same frame again each second.
    @discardableResult
    public func tick(now: Date = Date()) -> Bool {
        let before = state
        state.now = now
        if let banner = state.banner, banner.expiresAt <= now { state.banner = nil }
        retryLockedChannel()
        describeWait(now: now)
        markCurrentReadIfAtBottom()
        session.tickPresence(now: now)
        hook?.processes.reap(now: now)
        showPresence(now: now)
        // The time itself is drawn nowhere: it only says which banner has expired, and that was done above.
        var after = state
        after.now = before.now
        return after != before
    }

    /// Whether nothing on screen counts down and nothing happened for ``quietAfter`` seconds: no banner
    /// or typist shown, no wait for the database, no helper program running, the read marker where it
    /// belongs. A quiet client needs a tick only when ``nextTickDue(now:)`` says, not every second.
    public func isQuiet(now: Date = Date()) -> Bool {
        guard state.banner == nil, state.status.typing.isEmpty, sync.waitingSince == nil, sync.lockedBuffer == nil,
              now.timeIntervalSince(lastBusy) >= Self.quietAfter,
              session.helpers.running == 0, (hook?.processes.running ?? 0) == 0 else { return false }
        guard let following = followedToNewest, let newest = newestMessageTime else { return true }
        return (markedUpTo[following] ?? .distantPast) >= newest
    }

    /// When a quiet client's tick next changes something: its own heartbeat or going idle, or someone in the
    /// member list going stale; nil when nothing is due. Nothing else a tick does can change while quiet,
    /// but for a resize the terminal did not signal, which the loop's longest quiet wait bounds.
    public func nextTickDue(now: Date = Date()) -> Date? {
        let stale = state.showsMemberList ? presence.nextStale(now: now) : nil
        return [session.beacon?.nextDue, stale].compactMap { $0 }.min()
    }

    // MARK: Channels and conversations

    /// The channel on screen, if a channel is.
    var current: Channel? { roster.channels.first { $0.name == session.current } }

    /// What is on screen: a channel, or a direct conversation. It changes only when `open` shows
    /// another, while a command may already have made another one current in the session.
    var shown: Buffer? { roster.shown }

    /// How a channel or conversation is named in the list and the title: `#ops`, `@alice`.
    func label(_ buffer: Buffer) -> String {
        switch buffer {
        case .channel(let name): "#" + name.display
        case .conversation(let peer): roster.label(peer)
        }
    }

    /// Shows a channel or conversation: its newest page, title, members and where unread messages start.
    func open(_ buffer: Buffer) throws {
        if let previous = shown, previous != buffer {
            markRead(previous)
            keepInputHistory(of: previous)
        }
        switch buffer {
        case .channel(let name):
            session.select(name)
            let channel = try client.existingChannel(name)
            roster.add(channel)
            editor.history = roster.histories[channel.id] ?? InputHistory()
            roster.readUpTo[buffer] = client.lastRead(name)
            roster.seen(channel.id)
        case .conversation(let peer):
            session.select(conversation: peer)
            roster.add(conversation: peer)
            editor.history = roster.conversationHistories[peer] ?? InputHistory()
            roster.readUpTo[buffer] = client.lastRead(conversation: peer)
            roster.seen(conversation: peer)
        }
        roster.shown = buffer
        window = HistoryWindow()
        try loadNewest()
        findFirstUnread()
        refreshMembers()
        refreshChannelList()
        markRead(buffer)
    }

    private func keepInputHistory(of buffer: Buffer) {
        switch buffer {
        case .channel(let name):
            if let id = roster.channels.first(where: { $0.name == name })?.id { roster.histories[id] = editor.history }
        case .conversation(let peer):
            roster.conversationHistories[peer] = editor.history
        }
    }

    func refreshChannelList() {
        state.channels = roster.channels.map { channel in
            ChannelItem(id: channel.id.rawValue, name: "#" + channel.name.display,
                        unreadCount: roster.unread[channel.id] ?? 0, hasMention: roster.mentions.contains(channel.id),
                        createdAt: channel.created, isCurrent: channel.name == session.current)
        } + roster.conversations.map { peer in
            let activity = roster.activity(.conversation(peer))
            return ChannelItem(id: "@" + peer.rawValue, name: roster.label(peer), unreadCount: activity.unread, hasMention: activity.mention,
                               createdAt: .distantPast, isCurrent: peer == session.conversation, isDirect: true)
        }
        if let current {
            state.title = ChannelTitle(name: "#" + current.name.display, topic: current.topic, memberCount: state.members.count)
        } else if let peer = session.conversation {
            state.title = ChannelTitle(name: roster.label(peer), topic: "direct messages with \(peer.rawValue), sealed to you both",
                                       memberCount: state.members.count)
        } else {
            state.title = nil
        }
    }

    func refreshMembers() {
        if let peer = session.conversation {
            // The two sides; the other's handle is the newest one their messages carry.
            let handle = state.messages.last { $0.userID == peer.rawValue && !$0.isNotice }?.handle ?? AccountDirectory.accountName(of: peer.rawValue)
            state.members = [MemberItem(handle: client.handle, userID: client.user.rawValue)]
            if peer != client.user { state.members.append(MemberItem(handle: handle, userID: peer.rawValue)) }
            refreshChannelList()
            return
        }
        guard let name = session.current, let members = try? client.members(of: name) else { return }
        if let found = try? client.presence(of: members.map(\.user)) {
            for presence in found.values { self.presence.note(presence) }
        }
        state.members = members.map { MemberItem(handle: $0.handle, userID: $0.user.rawValue) }
        showPresence()
        refreshChannelList()
    }

    /// Moves the buffer's read marker to the newest message loaded, if it is on screen.
    func markRead(_ buffer: Buffer) {
        guard buffer == shown, let newest = newestMessageTime else { return }
        if let marked = markedUpTo[buffer], marked >= newest { return }
        do {
            switch buffer {
            case .channel(let name): try client.markRead(name, upTo: newest)
            case .conversation(let peer): try client.markRead(conversation: peer, upTo: newest)
            }
            markedUpTo[buffer] = newest
        } catch {
            // The private database is busy or gone: the next tick tries again.
        }
    }

    func markCurrentReadIfAtBottom() {
        if let following = followedToNewest { markRead(following) }
    }

    /// What is on screen, when its newest end is shown: the read marker follows it there.
    var followedToNewest: Buffer? {
        guard let shown, state.scroll == .bottom, window.atNewest else { return nil }
        return shown
    }

    /// When the newest message loaded was written, notices aside.
    var newestMessageTime: Date? {
        state.messages.last { !$0.id.hasPrefix(Self.noticePrefix) }?.time
    }

    // MARK: Notices

    static let noticePrefix = "notice:"

    /// A line of information in the current channel, as IRC clients print them; not stored.
    func notice(_ text: String) {
        noticeCounter += 1
        state.messages.append(MessageItem(id: Self.noticePrefix + String(noticeCounter), time: Date(), handle: "*",
                                          userID: "", text: text, isNotice: true))
    }
}
