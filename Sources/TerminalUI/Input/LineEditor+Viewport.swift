import FatchatCore

extension LineEditor {
    /// The most rows a multi-line draft takes on screen; a longer one scrolls with the cursor.
    public static let maximumRows = 5

    /// The draft's lines (Alt-Enter or a paste makes more than one).
    public var lineCount: Int { graphemes.reduce(1) { $1 == "\n" ? $0 + 1 : $0 } }

    /// The rows the input takes on screen: one per line of the draft, at most ``maximumRows``.
    public var rowCount: Int { min(Self.maximumRows, lineCount) }

    /// The part of the line that fits in `width` cells, scrolled horizontally so that the
    /// cursor shows, with the cursor's column in it. Newlines show as `↵`, controls as `^X`.
    public func viewport(width: Int) -> (text: String, cursorColumn: Int) {
        Self.window(graphemes, cursor: cursor, width: width, newline: "↵")
    }

    /// The draft as rows of `width` cells, at most `rows` of them: one per line, the window of
    /// lines that holds the cursor, each line scrolled horizontally as ``viewport(width:)`` is.
    public func rowsViewport(width: Int, rows: Int) -> (lines: [String], cursorRow: Int, cursorColumn: Int) {
        var lines: [[Character]] = [[]]
        var cursorLine = 0
        var cursorOffset = 0
        for (index, grapheme) in graphemes.enumerated() {
            if index == cursor { (cursorLine, cursorOffset) = (lines.count - 1, lines[lines.count - 1].count) }
            if grapheme == "\n" { lines.append([]) } else { lines[lines.count - 1].append(grapheme) }
        }
        if cursor >= graphemes.count { (cursorLine, cursorOffset) = (lines.count - 1, lines[lines.count - 1].count) }
        let shown = max(1, min(rows, lines.count))
        let first = min(max(0, cursorLine - shown + 1), lines.count - shown)
        var result: [String] = []
        var column = 0
        for index in first..<first + shown {
            let isCursorLine = index == cursorLine
            let window = Self.window(lines[index], cursor: isCursorLine ? cursorOffset : 0, width: width, newline: "↵")
            result.append(window.text)
            if isCursorLine { column = window.cursorColumn }
        }
        return (result, cursorLine - first, column)
    }

    static func window(_ graphemes: [Character], cursor: Int, width: Int, newline: String) -> (text: String, cursorColumn: Int) {
        guard width > 0 else { return ("", 0) }
        let shown = graphemes.map { $0 == "\n" ? newline : Sanitizer.inert(String($0)) }
        var starts: [Int] = [0]     // starts[i] = column where grapheme i begins
        for piece in shown { starts.append((starts.last ?? 0) + DisplayWidth.of(piece)) }
        let cursorX = starts[min(cursor, starts.count - 1)]
        let step = max(1, width / 2)
        let offset = cursorX < width ? 0 : ((cursorX - width) / step + 1) * step
        let first = starts.firstIndex { $0 >= offset } ?? graphemes.count
        var visible = ""
        var used = 0
        for index in first..<shown.count {
            let w = starts[index + 1] - starts[index]
            if used + w > width { break }
            visible += shown[index]
            used += w
        }
        let column = min(width - 1, max(0, cursorX - starts[min(first, starts.count - 1)]))
        return (visible, column)
    }
}
