import Foundation

/// What one running client says of its owner's presence, and when: a pure state machine
/// that the client and the bot drive with key presses, commands and ticks.
///
/// It writes when the state changes (start, `/away`, `/back`, going idle, coming back)
/// and otherwise once a ``Presence/heartbeat``: at most one write a minute while nothing happens.
public struct PresenceBeacon: Sendable, Equatable {
    /// What to write: a state and its reason.
    public struct Write: Sendable, Equatable {
        public var state: PresenceState
        public var reason: String
    }

    /// Seconds without a key before the beacon says away by itself; `nil` never.
    public var autoAwayAfter: TimeInterval?
    /// The reason given with `/away`, while away by choice.
    public private(set) var chosenAway: String?
    /// Away because nothing was typed for `autoAwayAfter`.
    public private(set) var idle = false
    private var lastActivity: Date
    private var lastWrite: Date?

    /// The reason an idle client gives.
    public static let idleReason = "idle"

    public init(autoAwayAfter: TimeInterval?, now: Date = Date()) {
        self.autoAwayAfter = autoAwayAfter.flatMap { $0 > 0 ? $0 : nil }
        lastActivity = now
    }

    /// What others should read now.
    public var current: Write {
        if let chosenAway { return Write(state: .away, reason: chosenAway) }
        return idle ? Write(state: .away, reason: Self.idleReason) : Write(state: .online, reason: "")
    }

    /// The first write, when the client starts.
    public mutating func start(now: Date = Date()) -> Write {
        lastWrite = now
        return current
    }

    /// A key was pressed or a line was sent: an idle client is back.
    public mutating func activity(now: Date = Date()) -> Write? {
        lastActivity = now
        guard idle else { return nil }
        idle = false
        return written(now)
    }

    /// `/away REASON`.
    public mutating func away(_ reason: String, now: Date = Date()) -> Write {
        chosenAway = String(reason.prefix(Presence.maximumReason))
        idle = false
        return written(now)
    }

    /// `/back`.
    public mutating func back(now: Date = Date()) -> Write {
        chosenAway = nil
        idle = false
        lastActivity = now
        return written(now)
    }

    /// Whether `/away` was chosen, so that `/away` alone toggles back.
    public var isAwayByChoice: Bool { chosenAway != nil }

    /// A tick: going idle, or the heartbeat that is due; `nil` when nothing is to be written.
    public mutating func tick(now: Date = Date()) -> Write? {
        if let autoAwayAfter, !idle, chosenAway == nil, now.timeIntervalSince(lastActivity) >= autoAwayAfter {
            idle = true
            return written(now)
        }
        if let lastWrite, now.timeIntervalSince(lastWrite) < Presence.heartbeat { return nil }
        return written(now)
    }

    /// When ``tick(now:)`` next has something to write: the heartbeat, or going idle. A client
    /// that sleeps until then misses nothing of its own presence; before ``start(now:)``, at once.
    public var nextDue: Date {
        guard let lastWrite else { return lastActivity }
        let heartbeat = lastWrite + Presence.heartbeat
        guard let autoAwayAfter, !idle, chosenAway == nil else { return heartbeat }
        return min(heartbeat, lastActivity + autoAwayAfter)
    }

    private mutating func written(_ now: Date) -> Write {
        lastWrite = now
        return current
    }
}

/// When a client says its owner is typing: at most once every ``TypingNotice/interval``
/// seconds per channel while keys are pressed, and again at once in another channel.
public struct TypingThrottle: Sendable, Equatable {
    private var last: (channel: ChannelName, at: Date)?

    public init() {}

    /// Whether a key pressed at `now` in `channel` should be announced.
    public mutating func shouldAnnounce(in channel: ChannelName, now: Date = Date()) -> Bool {
        if let last, last.channel == channel, now.timeIntervalSince(last.at) < TypingNotice.interval, now >= last.at { return false }
        last = (channel, now)
        return true
    }

    /// A line was sent: the next key starts a new announcement.
    public mutating func reset() { last = nil }

    public static func == (a: TypingThrottle, b: TypingThrottle) -> Bool {
        a.last?.channel == b.last?.channel && a.last?.at == b.last?.at
    }
}
