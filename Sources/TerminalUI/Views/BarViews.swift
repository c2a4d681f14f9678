import FatchatCore

/// The title line and the status line: one-row bars in reverse video.
enum BarViews {
    static func drawTitle(_ title: ChannelTitle?, in rect: Rect, on screen: inout Screen, theme: Theme) {
        guard rect.height > 0 else { return }
        screen.fill(row: rect.row, column: rect.column, width: rect.width, height: 1, style: theme.bar)
        guard let title else { return }
        let count = title.memberCount == 1 ? "1 member" : "\(title.memberCount) members"
        let countColumn = rect.column + rect.width - count.count - 1
        let showCount = countColumn > rect.column + DisplayWidth.of(title.name) + 2
        let limit = showCount ? countColumn - 1 : rect.column + rect.width
        var column = screen.write(" " + title.name, row: rect.row, column: rect.column, style: theme.bar.adding(.bold), limit: limit)
        if !title.topic.isEmpty {
            column = screen.write(" — " + title.topic.oneLine(within: rect.width), row: rect.row, column: column, style: theme.bar, limit: limit)
        }
        if showCount { screen.write(count, row: rect.row, column: countColumn, style: theme.bar) }
    }

    static func drawStatus(_ status: StatusInfo, in rect: Rect, on screen: inout Screen, theme: Theme) {
        guard rect.height > 0 else { return }
        screen.fill(row: rect.row, column: rect.column, width: rect.width, height: 1, style: theme.bar)
        var parts = [status.handle.isEmpty ? "" : "[\(status.handle)]"]
        if status.pendingCount > 0 { parts.append("\(status.pendingCount) pending") }
        if status.failedCount > 0 { parts.append("\(status.failedCount) failed") }
        if !status.away.isEmpty { parts.append(status.away) }
        if !status.syncState.isEmpty { parts.append(status.syncState) }
        if !status.typing.isEmpty { parts.append(status.typing) }
        let text = " " + parts.filter { !$0.isEmpty }.joined(separator: " · ")
        screen.write(text, row: rect.row, column: rect.column, style: theme.bar, limit: rect.column + rect.width)
    }
}

extension String {
    /// Newlines as spaces, for one-line fields such as a topic.
    var replacingNewlines: String { String(map { $0 == "\n" || $0 == "\r\n" || $0 == "\r" ? " " : $0 }) }

    /// The start of a one-line field that can fill `cells` cells at most, newlines as spaces:
    /// a topic or banner of any size costs a frame no more than the row it is drawn on.
    /// Each cell shows one character at least; the margin is for lone format characters,
    /// which the sanitizer drops.
    func oneLine(within cells: Int) -> String { String(prefix(max(0, cells) * 4 + 16)).replacingNewlines }
}
