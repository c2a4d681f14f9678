import FatchatCore

/// The input line: a prompt with the channel name, then the editor's visible part; a
/// multi-line draft takes as many rows as the layout gives it, each under the first's text.
enum InputView {
    static func draw(_ editor: LineEditor, channelName: String?, in rect: Rect, on screen: inout Screen) {
        guard rect.height > 0, rect.width > 0 else { return }
        screen.fill(row: rect.row, column: rect.column, width: rect.width, height: rect.height)
        var prompt = channelName.map { "[\(Sanitizer.inert($0.replacingNewlines))] " } ?? "> "
        if DisplayWidth.of(prompt) > rect.width / 3 { prompt = DisplayWidth.prefix(prompt, fitting: max(0, rect.width / 3 - 2)) + "> " }
        let start = screen.write(prompt, row: rect.row, column: rect.column, style: Style(attributes: [.bold]), limit: rect.column + rect.width)
        let width = max(1, rect.column + rect.width - start)
        if rect.height == 1 {
            let (text, cursorColumn) = editor.viewport(width: width)
            screen.write(text, row: rect.row, column: start, limit: rect.column + rect.width)
            screen.cursor = (rect.row, start + cursorColumn)
            return
        }
        let (lines, cursorRow, cursorColumn) = editor.rowsViewport(width: width, rows: rect.height)
        for (offset, line) in lines.enumerated() {
            screen.write(line, row: rect.row + offset, column: start, limit: rect.column + rect.width)
        }
        screen.cursor = (rect.row + cursorRow, start + cursorColumn)
    }
}
