import Foundation
import RecordStore

/// Whether someone is around: online while a client of theirs runs, away when they said so
/// (or stopped typing for a while), offline once their client exited or stopped beating.
public enum PresenceState: String, Sendable, Hashable {
    case online, away, offline
}

/// Someone's presence, read from the one `Presence` record their account overwrites.
///
/// The record lives outside message history: it is never a message, and one account
/// has one of them whatever it does, so a heartbeat a minute adds nothing that grows
/// (on the `log` engine, one log entry a minute, which compaction turns into a stub).
public struct Presence: Sendable, Hashable {
    public var user: UserID
    public var handle: String
    /// The state as its owner last wrote it.
    public var state: PresenceState
    /// Why they are away, if they said.
    public var reason: String
    /// When its owner's client last wrote it: the heartbeat, and "last seen".
    public var seen: Date

    /// How often a running client writes its presence again when nothing changed.
    public static let heartbeat: TimeInterval = 60
    /// A presence not written for this long is a client that died: it reads as offline.
    public static let staleAfter: TimeInterval = 150
    /// The longest away reason kept; the rest is cut.
    public static let maximumReason = 200

    public init(user: UserID, handle: String, state: PresenceState, reason: String = "", seen: Date) {
        (self.user, self.handle, self.state, self.reason, self.seen) = (user, handle, state, reason, seen)
    }

    /// The state as others should read it at `now`: a heartbeat older than ``staleAfter`` is offline.
    public func state(at now: Date) -> PresenceState {
        state != .offline && now.timeIntervalSince(seen) <= Self.staleAfter ? state : .offline
    }

    /// `online`, `away: lunch`, `offline, last seen 14:02`: how a member list or `/who` says it.
    public func describe(at now: Date) -> String {
        switch state(at: now) {
        case .online: return "online"
        case .away: return reason.isEmpty ? "away" : "away: \(reason)"
        case .offline: return seen == .distantPast ? "offline" : "offline, last seen \(Self.lastSeen(seen, now: now))"
        }
    }

    /// `14:02` today, else `Nov 21 14:02`, in local time.
    static func lastSeen(_ date: Date, now: Date) -> String {
        let sameDay = Calendar.current.isDate(date, inSameDayAs: now)
        let style = sameDay ? Date.FormatStyle().hour(.twoDigits(amPM: .omitted)).minute(.twoDigits)
            : Date.FormatStyle().month(.abbreviated).day().hour(.twoDigits(amPM: .omitted)).minute(.twoDigits)
        return date.formatted(style)
    }

    static let recordType = "Presence"

    /// The one presence record of an account: `presence.<account>`.
    static func recordID(for user: RecordID) -> RecordID { RecordID(recordName: "presence.\(user.recordName)") }

    /// A presence read from its record; `nil` unless the record is its creator's own (`presence.<creator>`).
    init?(_ record: Record) {
        guard record.recordType == Self.recordType, let creator = record.creatorUserRecordID,
              record.recordID == Self.recordID(for: creator),
              let raw = record["state"]?.stringValue, let state = PresenceState(rawValue: raw) else { return nil }
        user = UserID(creator)
        handle = record["handle"]?.stringValue ?? creator.recordName
        self.state = state
        reason = String((record["reason"]?.stringValue ?? "").prefix(Self.maximumReason))
        seen = record["seen"]?.dateValue ?? record.modificationDate ?? .distantPast
    }

    /// The record that says this presence, for its owner to save over the last one.
    func record(for owner: RecordID) -> Record {
        var record = Record(recordType: Self.recordType, recordID: Self.recordID(for: owner))
        record["state"] = .string(state.rawValue)
        record["reason"] = .string(String(reason.prefix(Self.maximumReason)))
        record["handle"] = .string(handle)
        record["seen"] = .date(seen)
        return record
    }
}

/// Someone is typing in a channel: read from the one `Typing` record their account overwrites.
///
/// Never a message: history and message queries never see it, and a view forgets it
/// ``TypingNotice/lasts`` seconds after it arrived.
public struct TypingNotice: Sendable, Equatable {
    public var user: UserID
    public var handle: String
    public var channel: ChannelID
    /// The channel's name, for output that names it.
    public var channelName: String
    /// When the typist's client wrote it, by its clock.
    public var at: Date

    /// How long an indicator shows after the last notice.
    public static let lasts: TimeInterval = 5
    /// The shortest time between two notices of one client while keys are pressed.
    public static let interval: TimeInterval = 3
    /// A notice written longer ago than this (by the typist's clock, against ours) is old news, not shown.
    public static let tooOld: TimeInterval = 10

    static let recordType = "Typing"

    static func recordID(for user: RecordID) -> RecordID { RecordID(recordName: "typing.\(user.recordName)") }

    public init(user: UserID, handle: String, channel: ChannelName, at: Date) {
        (self.user, self.handle, self.channel, self.channelName, self.at) = (user, handle, channel.id, channel.display, at)
    }

    /// A notice read from its record; `nil` unless the record is its creator's own and names a valid channel.
    init?(_ record: Record) {
        guard record.recordType == Self.recordType, let creator = record.creatorUserRecordID,
              record.recordID == Self.recordID(for: creator),
              let raw = record["channel"]?.stringValue, let name = try? ChannelName(raw),
              let at = record["at"]?.dateValue else { return nil }
        self.init(user: UserID(creator), handle: record["handle"]?.stringValue ?? creator.recordName, channel: name, at: at)
    }

    func record(for owner: RecordID) -> Record {
        var record = Record(recordType: Self.recordType, recordID: Self.recordID(for: owner))
        record["channel"] = .string(channelName)
        record["handle"] = .string(handle)
        record["at"] = .date(at)
        return record
    }

    /// Whether it is fresh enough to show at `now`.
    public func isCurrent(at now: Date) -> Bool { abs(now.timeIntervalSince(at)) <= Self.tooOld }
}
