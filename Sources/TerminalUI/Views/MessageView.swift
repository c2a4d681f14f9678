import FatchatCore

/// The message view: the visible message lines, and a "new messages below" marker while scrolled up.
enum MessageView {
    static func draw(_ viewport: MessageViewport, showsNewBelow: Bool, in rect: Rect, on screen: inout Screen, theme: Theme) {
        guard rect.height > 0, rect.width > 0 else { return }
        // Lines fill the view from the bottom, as in a chat: few messages sit above the input.
        let firstRow = rect.row + max(0, rect.height - viewport.visible.count)
        for (offset, line) in viewport.visible.enumerated() {
            for segment in line.segments {
                screen.write(segment.text, row: firstRow + offset, column: rect.column + segment.column,
                             style: segment.style, limit: rect.column + rect.width)
            }
        }
        if showsNewBelow, !viewport.isAtBottom {
            let row = rect.row + rect.height - 1
            let label = "↓ new messages below ↓"
            screen.fill(row: row, column: rect.column, width: rect.width, height: 1, style: theme.marker.adding(.reverse))
            let column = rect.column + max(0, (rect.width - DisplayWidth.of(label)) / 2)
            screen.write(label, row: row, column: column, style: theme.marker.adding(.reverse), limit: rect.column + rect.width)
        }
    }
}
