import Foundation
import RecordStore

/// Writes chat events and command results as lines: plain for people and
/// shell pipelines, or one JSON object per line with `--json`.
public struct EventFormatter: Sendable {
    public var json: Bool
    /// Colour handles (plain output to a terminal, without `NO_COLOR`).
    public var color: Bool

    public init(json: Bool, color: Bool = false) {
        self.json = json
        self.color = color
    }

    /// Whether plain output to this descriptor may use colour: a terminal, and `NO_COLOR` unset.
    public static func wantsColor(fd: Int32) -> Bool {
        isatty(fd) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"].map(\.isEmpty) ?? true
    }

    /// RFC 3339 with milliseconds, in UTC.
    static func rfc3339(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// `TIME #channel <handle> text`, or `{"type":"message",...}`.
    public func message(_ message: Message, type: String = "message") -> String {
        if json {
            var object: [String: Any] = [
                "type": type, "channel": message.channelName, "id": message.id.recordName,
                "from": message.handle, "user": message.sender?.recordName ?? "", "text": message.text,
                "at": Self.rfc3339(message.date),
            ]
            if message.edited { object["edited"] = true }
            if let attachment = message.attachment {
                object["attachment"] = ["type": message.attachmentType ?? "application/octet-stream", "size": attachment.size ?? 0]
            }
            return encode(object)
        }
        let time = Self.clock(message.date)
        let handle = color ? "\u{1B}[\(HandleColor.ansi(for: message.sender?.recordName ?? message.handle))m\(Sanitizer.inert(message.handle))\u{1B}[0m" : Sanitizer.inert(message.handle)
        var line = "\(time) #\(Sanitizer.inert(message.channelName)) <\(handle)> \(Sanitizer.inert(message.text))"
        if message.edited { line += " (edited)" }
        if message.attachment != nil { line += " [attachment \(message.shortID): \(message.attachmentType ?? "file")]" }
        if type == "edited" { line = "* " + line }
        return line
    }

    /// Any other event or result: a type plus fields. Plain output shows `text`, or the fields.
    public func event(_ type: String, _ fields: [String: Any]) -> String {
        if json {
            var object = fields
            object["type"] = type
            return encode(object)
        }
        if let text = fields["text"] as? String {
            return "-- " + Sanitizer.inert(text)
        }
        let parts = fields.keys.sorted().map { "\($0)=\(Sanitizer.inert("\(fields[$0] ?? "")"))" }
        return "-- \(type) " + parts.joined(separator: " ")
    }

    /// An error, for stderr in plain mode or stdout in `--json` mode.
    public func error(_ message: String) -> String {
        json ? encode(["type": "error", "text": message]) : "fatchat: " + Sanitizer.inert(message)
    }

    static func clock(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970)
        var parts = tm()
        localtime_r(&time, &parts)
        return String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }

    private func encode(_ object: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "{\"type\":\"error\",\"text\":\"an event could not be encoded\"}"
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A handle's colour, hashed from the user's identity so it is the same everywhere:
/// in the full-screen client and in `bot`/`read` output to a terminal.
public enum HandleColor {
    /// The xterm colour indices handles are drawn in: readable on dark and light backgrounds.
    public static let palette: [UInt8] = [1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14]

    /// The palette colour for a user id: 32-bit FNV-1a of its UTF-8 bytes, modulo the palette.
    public static func of(userID: String) -> UInt8 {
        palette[Int(fnv1a(userID) % UInt32(palette.count))]
    }

    /// The 32-bit FNV-1a hash of a string's UTF-8 bytes.
    public static func fnv1a(_ text: String) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in text.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return hash
    }

    /// The same colour as an ANSI SGR code, for plain output.
    static func ansi(for user: String) -> String {
        let colour = of(userID: user)
        return colour < 8 ? "3\(colour)" : "9\(colour - 8)"
    }
}
