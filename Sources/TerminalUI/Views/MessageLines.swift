import FatchatCore
import Foundation

/// A run of text in one style at a column of a message line.
public struct Segment: Sendable, Equatable {
    /// Column within the line.
    public var column: Int
    /// Text, already sanitized.
    public var text: String
    /// How it is drawn.
    public var style: Style
}

/// One screen line of the message view, tied to the message it belongs to.
public struct MessageLine: Sendable, Equatable {
    /// The message this line belongs to (a marker line belongs to the message below it).
    public var messageID: String
    /// The line's index among that message's lines.
    public var index: Int
    /// What the line shows.
    public var segments: [Segment]
}

/// How a message's sender, and the sender of the message it answers, read on screen, inert.
public struct MessageLabels: Sendable, Equatable {
    /// The sender's label.
    public var sender: String
    /// The label of the sender of the message a reply answers; nil for other messages and deleted parents.
    public var quoted: String?
}

/// Turns messages into wrapped, styled lines: `HH:MM <handle> text`, continuation lines
/// indented under the text, a marker line above the first unread message.
public struct MessageLines: Sendable {
    /// Width to wrap to.
    public var width: Int
    /// My handle, highlighted where a message mentions it.
    public var myHandle: String
    /// My highlight words, highlighted as my handle is.
    public var highlightWords: [String]
    /// The styles.
    public var theme: Theme
    /// The time zone for `HH:MM`.
    public var timeZone: TimeZone

    /// Creates a line builder.
    public init(width: Int, myHandle: String, highlightWords: [String] = [], theme: Theme = Theme(), timeZone: TimeZone = .current) {
        self.width = width
        self.myHandle = myHandle
        self.highlightWords = highlightWords
        self.theme = theme
        self.timeZone = timeZone
    }

    /// All lines for `messages`, oldest first. A sender shows its account beside its handle
    /// when `accounts` says the handle could pass for someone else; `cache` keeps each
    /// message's lines from one frame to the next.
    public func lines(for messages: [MessageItem], firstUnreadID: String?, accounts: AccountDirectory = AccountDirectory(),
                      cache: MessageLineCache? = nil) -> [MessageLine] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let labels = messages.map { message in
            MessageLabels(sender: message.isNotice ? AccountDirectory.shown(message.handle) : accounts.label(handle: message.handle, user: message.userID),
                          quoted: message.quote.flatMap { $0.isDeleted ? nil : accounts.label(handle: $0.handle, user: $0.userID) })
        }
        let wrapped: [[[Segment]]]
        if let cache {
            let context = MessageLineCache.Context(width: width, myHandle: myHandle, highlightWords: highlightWords, theme: theme, timeZone: timeZone)
            wrapped = cache.lines(for: messages, labels: labels, context: context) { wrap($0, labels: $1, calendar: calendar) }
        } else {
            wrapped = zip(messages, labels).map { wrap($0, labels: $1, calendar: calendar) }
        }
        var result: [MessageLine] = []
        for (message, lines) in zip(messages, wrapped) {
            var offset = 0
            if message.id == firstUnreadID {
                result.append(markerLine(messageID: message.id))
                offset = 1
            }
            for (index, segments) in lines.enumerated() {
                result.append(MessageLine(messageID: message.id, index: index + offset, segments: segments))
            }
        }
        return result
    }

    private func markerLine(messageID: String) -> MessageLine {
        let label = " new messages "
        let side = max(0, (width - label.count) / 2)
        let text = String(repeating: "─", count: side) + label + String(repeating: "─", count: max(0, width - side - label.count))
        return MessageLine(messageID: messageID, index: 0, segments: [Segment(column: 0, text: text, style: theme.marker)])
    }

    /// The parts of a message's time its first line shows; made once, not per message.
    private static let clockParts: Set<Calendar.Component> = [.hour, .minute]

    /// The wrapped lines of one message, as segments; `labels` are its sender (and its parent's) as shown, inert.
    func wrap(_ message: MessageItem, labels: MessageLabels, calendar: Calendar) -> [[Segment]] {
        let parts = calendar.dateComponents(Self.clockParts, from: message.time)
        let time = ClockText.of(parts.hour ?? 0, parts.minute ?? 0)
        let label = labels.sender
        let handle = (message.isUnverified ? "?" : "") + (message.isAction ? "* " + label : "<" + label + ">")
        let headerWidth = DisplayWidth.of(time) + 1 + DisplayWidth.of(handle) + 1
        let indent = min(headerWidth, max(0, width / 2))

        let baseStyle = message.delivery == .pending ? theme.pending : Style.plain
        var body: [(Character, Style)] = Array(Sanitizer.inert(message.text, keepingNewlines: true)).map { ($0, baseStyle) }
        highlightMentions(in: &body)
        if message.isEdited { body += Array(" (edited)").map { ($0, theme.edited) } }
        for badge in message.reactions {
            body += Array("  " + Sanitizer.inert(badge.emoji).replacingNewlines + " \(badge.count)").map { ($0, theme.reaction) }
        }
        if message.delivery == .failed { body += Array(" [not sent]").map { ($0, theme.failed) } }
        if let more = TextPrefix.moreMark(omittedBytes: message.omittedBytes) { body += Array("\n" + more).map { ($0, theme.edited) } }

        let graphemes = body.map(\.0)
        let ranges = TextWrapper.lineRanges(graphemes, firstWidth: max(1, width - headerWidth), width: max(1, width - indent))
        var lines: [[Segment]] = message.quote.map { [quoteLine($0, label: labels.quoted, column: DisplayWidth.of(time) + 1)] } ?? []
        for (lineNumber, range) in ranges.enumerated() {
            var segments: [Segment] = []
            var column: Int
            if lineNumber == 0 {
                let handleStyle = Style(foreground: HandleColor.of(userID: message.userID), attributes: [.bold])
                segments.append(Segment(column: 0, text: time, style: theme.time))
                segments.append(Segment(column: DisplayWidth.of(time) + 1, text: handle, style: handleStyle))
                column = headerWidth
            } else {
                column = indent
            }
            // Group consecutive graphemes of one style into a segment.
            var runStart = range.lowerBound
            while runStart < range.upperBound {
                var runEnd = runStart + 1
                while runEnd < range.upperBound, body[runEnd].1 == body[runStart].1 { runEnd += 1 }
                let text = String(graphemes[runStart..<runEnd])
                segments.append(Segment(column: column, text: text, style: body[runStart].1))
                column += DisplayWidth.of(text)
                runStart = runEnd
            }
            lines.append(segments)
        }
        return lines
    }

    /// `↳ <alice> first words…` at `column`, cut to the width; `↳ (deleted message)` for a parent that is gone.
    private func quoteLine(_ quote: ReplyQuote, label: String?, column: Int) -> [Segment] {
        let room = max(0, width - column)
        var text: String
        if quote.isDeleted {
            text = "↳ (deleted message)"
        } else {
            let words = Sanitizer.inert(quote.text.replacingNewlines).split(separator: " ").joined(separator: " ")
            text = "↳ " + (quote.isUnverified ? "?<" : "<") + (label ?? "?") + "> " + words
        }
        if DisplayWidth.of(text) > room { text = DisplayWidth.prefix(text, fitting: max(0, room - 1)) + "…" }
        return [Segment(column: column, text: text, style: theme.quote)]
    }

    /// Marks whole-word, case-insensitive occurrences of my handle and my highlight words.
    private func highlightMentions(in body: inout [(Character, Style)]) {
        let lowered = body.map { $0.0.lowercased() }
        for word in MentionMatcher(handle: myHandle, highlights: highlightWords).words {
            highlight(word.map { String($0) }, in: &body, lowered: lowered)
        }
    }

    private func highlight(_ needle: [String], in body: inout [(Character, Style)], lowered: [String]) {
        guard !needle.isEmpty, body.count >= needle.count else { return }
        var i = 0
        while i + needle.count <= lowered.count {
            let before = i == 0 ? " " : lowered[i - 1]
            let after = i + needle.count < lowered.count ? lowered[i + needle.count] : " "
            if lowered[i..<i + needle.count].elementsEqual(needle), !isHandlePart(before), !isHandlePart(after) {
                for j in i..<i + needle.count { body[j].1 = theme.mention }
                i += needle.count
            } else {
                i += 1
            }
        }
    }

    private func isHandlePart(_ s: String) -> Bool { s.contains { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" } }
}
