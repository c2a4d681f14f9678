import Foundation
import RecordStore

/// Writes chat events and command results as lines: plain for people and
/// shell pipelines, or one JSON object per line with `--json`.
///
/// This is the output edge of the bot and of `read`: a plain line is made inert here, each
/// untrusted string once, and a JSON line is built by ``JSONText``, which escapes every control.
public struct EventFormatter: Sendable {
    public var json: Bool
    /// Colour handles (plain output to a terminal, without `NO_COLOR`).
    public var color: Bool
    /// The accounts seen so far: a handle that could pass for one of them shows its account.
    public var accounts = AccountDirectory()

    public init(json: Bool, color: Bool = false) {
        self.json = json
        self.color = color
    }

    /// Whether plain output to this descriptor may use colour: a terminal, and `NO_COLOR` unset.
    public static func wantsColor(fd: Int32) -> Bool {
        isatty(fd) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"].map(\.isEmpty) ?? true
    }

    /// Notes a message's sender, so that later lines can tell its handle apart from others.
    public mutating func learn(_ message: Message) {
        accounts.learn(user: message.sender?.rawValue ?? "", handle: message.handle)
    }

    /// Notes the members of a channel and the handles they go by.
    public mutating func learn(_ members: [Member]) {
        for member in members { accounts.learn(user: member.user.rawValue, handle: member.handle) }
    }

    /// Notes a notification's sender, as a message's.
    public mutating func learn(_ notification: ChatNotification) {
        accounts.learn(user: notification.user, handle: notification.handle)
    }

    /// RFC 3339 with milliseconds, in UTC.
    static func rfc3339(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// `TIME #channel <handle> text`, or `{"type":"message",...}`; the handle shows its
    /// account whenever it could pass for someone else, and its colour is the account's.
    /// An action reads `TIME #channel * handle text`, a reply `TIME #channel <handle> ↳3f9a0c text`;
    /// `mention` marks a message that mentions me (JSON `"mention": true`, plain `!` before the handle).
    public func message(_ message: Message, type: String = "message", mention: Bool = false) -> String {
        let user = message.sender?.rawValue ?? ""
        if json {
            var object: [String: Any] = [
                "type": type, "channel": message.channelName, "id": message.id.rawValue,
                "from": message.handle, "user": user, "text": message.text,
                "at": Self.rfc3339(message.date),
            ]
            if message.edited { object["edited"] = true }
            if !message.verified { object["verified"] = false }
            if let parent = message.replyTo { object["reply_to"] = parent.rawValue }
            if message.isAction { object["action"] = true }
            if mention { object["mention"] = true }
            if let attachment = message.attachment {
                object["attachment"] = ["type": message.attachmentType ?? "application/octet-stream", "size": attachment.size ?? 0]
            }
            return JSONText.object(object)
        }
        let sender = label(handle: message.handle, user: user)
        let handle = color ? "\u{1B}[\(HandleColor.ansi(for: user))m\(sender)\u{1B}[0m" : sender
        var rest = message.text
        if let parent = message.replyTo { rest = "↳" + String(parent.rawValue.prefix(6)) + " " + rest }
        if message.edited { rest += " (edited)" }
        if message.attachment != nil { rest += " [attachment \(message.shortID): \(message.attachmentType ?? "file")]" }
        let mark = (mention ? "!" : "") + (message.verified ? "" : "?")
        let shownSender = message.isAction ? "* \(handle)" : "<\(handle)>"
        let line = "\(Self.clock(message.date)) #\(Sanitizer.inert(message.channelName)) \(mark)\(shownSender) \(Sanitizer.inert(rest))"
        return type == "edited" ? "* " + line : line
    }

    /// `TIME @bob <alice> text` for a direct message (the conversation's other side after `@`),
    /// or `{"type":"dm",...}` with `from`, `user`, `to`, `text` and `at`.
    public func directMessage(_ message: DirectMessage) -> String {
        if json {
            var object: [String: Any] = ["type": "dm", "id": message.id.rawValue, "from": message.handle, "user": message.from.rawValue,
                                         "to": message.to.rawValue, "text": message.text, "at": Self.rfc3339(message.date)]
            if !message.verified { object["verified"] = false }
            return JSONText.object(object)
        }
        let mark = message.verified ? "" : "?"
        let sender = label(handle: message.handle, user: message.from.rawValue)
        return "\(Self.clock(message.date)) dm \(Sanitizer.inert(message.from.rawValue))→\(Sanitizer.inert(message.to.rawValue)) \(mark)<\(Sanitizer.inert(sender))> \(Sanitizer.inert(message.text))"
    }

    /// `-- alice (bob): hi (in #ops)`, or `{"type":"notification",...}`: the alert with its sender
    /// labelled as in message lines, inert, and in JSON the sender's `from` and `user` beside it.
    public func notification(_ notification: ChatNotification) -> String {
        let text = Sanitizer.inert(notification.alert(sender: label(handle: notification.handle, user: notification.user)))
        return event("notification", ["text": text, "channel": notification.channel ?? "", "id": notification.messageID.rawValue,
                                      "from": notification.handle, "user": notification.user])
    }

    /// A message's reactions: `-- reactions on 3f9a0c in #general: 👍 2 (ada, bob) · 🎉 1 (eve)`, or
    /// `{"type":"reactions","channel":…,"id":…,"reactions":[{"emoji":…,"count":…,"users":[…],"handles":[…]}]}`.
    public func reactions(_ counts: [ReactionCount], on message: Message) -> String {
        if json {
            let list: [[String: Any]] = counts.map {
                ["emoji": $0.emoji, "count": $0.count, "users": $0.users.map(\.rawValue), "handles": $0.handles]
            }
            return JSONText.object(["type": "reactions", "channel": message.channelName, "id": message.id.rawValue, "reactions": list])
        }
        let parts = counts.map { count in
            "\(count.emoji) \(count.count) (" + zip(count.handles, count.users).map { label(handle: $0, user: $1.rawValue) }.joined(separator: ", ") + ")"
        }
        return Sanitizer.inert("-- reactions on \(message.shortID) in #\(message.channelName): " + (parts.isEmpty ? "none" : parts.joined(separator: " · ")))
    }

    /// How a sender or member reads in plain output: the handle, with the account whenever it could pass for someone else.
    public func label(handle: String, user: String) -> String {
        accounts.label(handle: handle, user: user)
    }

    /// Any other event or result: a type plus fields. Plain output shows `text`, or the fields.
    public func event(_ type: String, _ fields: [String: Any]) -> String {
        if json {
            var object = fields
            object["type"] = type
            return JSONText.object(object)
        }
        if let text = fields["text"] as? String {
            return "-- " + Sanitizer.inert(text)
        }
        return Sanitizer.inert("-- \(type) " + fields.keys.sorted().map { "\($0)=\(fields[$0] ?? "")" }.joined(separator: " "))
    }

    /// A plain line that is not an event, such as a list of channels: made inert whole.
    public func plain(_ line: String) -> String {
        Sanitizer.inert(line)
    }

    /// A channel's members for plain output: `#channel: ada [online] bob (eve) [away: lunch]`,
    /// each labelled as in messages, with their presence when it is known.
    public func members(_ members: [Member], of channel: String, now: Date = Date()) -> String {
        let labels = members.map { member in
            label(handle: member.handle, user: member.user.rawValue) + (member.presence.map { " [\($0.describe(at: now))]" } ?? "")
        }
        return "#\(Sanitizer.inert(channel)): " + Sanitizer.inert(labels.joined(separator: " "))
    }

    /// One member in JSON: `handle`, `user`, and when known `presence` (`online`, `away`, `offline`),
    /// `reason` (when away) and `last_seen`.
    public func memberObject(_ member: Member) -> [String: Any] {
        var object: [String: Any] = ["handle": member.handle, "user": member.user.rawValue]
        if let presence = member.presence {
            let state = presence.state(at: Date())
            object["presence"] = state.rawValue
            if state == .away { object["reason"] = presence.reason }
            if presence.seen != .distantPast { object["last_seen"] = Self.rfc3339(presence.seen) }
        }
        return object
    }

    /// `-- ada (bob) is away: lunch`, or `{"type":"presence","from":…,"user":…,"state":"away","reason":"lunch","seen":…}`.
    public func presence(_ presence: Presence, at now: Date = Date()) -> String {
        let state = presence.state(at: now)
        var fields: [String: Any] = ["from": presence.handle, "user": presence.user.rawValue, "state": state.rawValue,
                                     "seen": Self.rfc3339(presence.seen),
                                     "text": "\(label(handle: presence.handle, user: presence.user.rawValue)) is \(presence.describe(at: now))"]
        if state == .away { fields["reason"] = presence.reason }
        return event("presence", fields)
    }

    /// `{"type":"typing","channel":…,"from":…,"user":…,"at":…}`; plain: `-- ada is typing in #general`.
    public func typing(_ notice: TypingNotice) -> String {
        event("typing", ["channel": notice.channelName, "from": notice.handle, "user": notice.user.rawValue, "at": Self.rfc3339(notice.at),
                         "text": "\(label(handle: notice.handle, user: notice.user.rawValue)) is typing in #\(notice.channelName)"])
    }

    /// An error, for stderr in plain mode or stdout in `--json` mode.
    public func error(_ message: String) -> String {
        json ? JSONText.object(["type": "error", "text": message]) : "fatchat: " + Sanitizer.inert(message)
    }

    /// `HH:MM:SS` in local time; a date no clock can show (infinite, say) reads as the Unix epoch.
    static func clock(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        var time = seconds.isFinite && abs(seconds) < 1e15 ? time_t(seconds) : 0
        var parts = tm()
        localtime_r(&time, &parts)
        return ClockText.of(Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }
}
