import FatchatCore

/// Things drawn over the panes: the notification banner and the help box.
enum OverlayViews {
    static func drawBanner(_ banner: Banner, in rect: Rect, on screen: inout Screen, theme: Theme) {
        guard rect.height > 0 else { return }
        screen.fill(row: rect.row, column: rect.column, width: rect.width, height: 1, style: theme.banner)
        screen.write(" ★ " + banner.text.oneLine(within: rect.width), row: rect.row, column: rect.column, style: theme.banner, limit: rect.column + rect.width)
    }

    /// A framed box with the help text, centred; lines that do not fit are cut.
    static func drawHelp(_ text: String, width: Int, height: Int, on screen: inout Screen, theme: Theme) {
        var trimmed = Substring(text)
        while trimmed.last?.isNewline == true { trimmed.removeLast() }
        let lines = trimmed.split(separator: "\n", omittingEmptySubsequences: false).map { Sanitizer.inert(String($0)) }
        let contentWidth = min(max(10, lines.map { DisplayWidth.of($0) }.max() ?? 0), width - 4)
        let boxWidth = contentWidth + 4
        let boxHeight = min(lines.count + 2, height)
        guard boxWidth >= 6, boxHeight >= 3 else { return }
        let top = (height - boxHeight) / 2
        let left = (width - boxWidth) / 2
        screen.fill(row: top, column: left, width: boxWidth, height: boxHeight, style: theme.overlay)
        let horizontal = String(repeating: "─", count: boxWidth - 2)
        screen.write("┌" + horizontal + "┐", row: top, column: left, style: theme.overlay)
        screen.write("└" + horizontal + "┘", row: top + boxHeight - 1, column: left, style: theme.overlay)
        for row in top + 1..<top + boxHeight - 1 {
            screen.write("│", row: row, column: left, style: theme.overlay)
            screen.write("│", row: row, column: left + boxWidth - 1, style: theme.overlay)
            let index = row - top - 1
            if index < lines.count {
                screen.write(lines[index], row: row, column: left + 2, style: theme.overlay, limit: left + 2 + contentWidth)
            }
        }
        screen.write(" Esc closes ", row: top + boxHeight - 1, column: left + 2, style: theme.overlay, limit: left + boxWidth - 1)
    }
}
