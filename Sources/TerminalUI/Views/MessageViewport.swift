/// The part of the message lines that fits the message view, for a scroll position.
public struct MessageViewport: Sendable, Equatable {
    /// The lines on screen, top to bottom.
    public var visible: [MessageLine]
    /// Index of the top visible line among all lines.
    public var top: Int
    /// Number of lines of all loaded messages.
    public var totalLines: Int
    /// True when the oldest loaded line shows: the client should load an older page.
    public var reachesOldest: Bool { top == 0 }
    /// True when the newest line shows.
    public var isAtBottom: Bool

    /// Cuts the window of `height` lines out of `lines` at `position`.
    public init(lines: [MessageLine], height: Int, position: ScrollPosition) {
        let height = max(0, height)
        let maxTop = max(0, lines.count - height)
        var top = maxTop
        if case .anchored(let messageID, let line) = position {
            if let first = lines.firstIndex(where: { $0.messageID == messageID }) {
                var index = first
                while index + 1 < lines.count, lines[index + 1].messageID == messageID, lines[index].index < line { index += 1 }
                top = min(index, maxTop)
            } else {
                top = 0
            }
        }
        self.top = top
        self.totalLines = lines.count
        self.visible = Array(lines[top..<min(lines.count, top + height)])
        self.isAtBottom = top >= maxTop
    }

    /// The position after scrolling `delta` lines towards older messages (negative: newer).
    /// Reaching the newest line gives ``ScrollPosition/bottom``.
    public static func scroll(_ position: ScrollPosition, by delta: Int, lines: [MessageLine], height: Int) -> ScrollPosition {
        let current = MessageViewport(lines: lines, height: height, position: position)
        let maxTop = max(0, lines.count - max(0, height))
        let newTop = min(maxTop, max(0, current.top - delta))
        guard newTop < maxTop, newTop < lines.count else { return .bottom }
        return .anchored(messageID: lines[newTop].messageID, line: lines[newTop].index)
    }
}
