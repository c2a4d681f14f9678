import FatchatCore

extension LineEditor {
    /// The part of the line that fits in `width` cells, scrolled horizontally so that the
    /// cursor shows, with the cursor's column in it. Newlines show as `↵`, controls as `^X`.
    public func viewport(width: Int) -> (text: String, cursorColumn: Int) {
        guard width > 0 else { return ("", 0) }
        let shown = graphemes.map { $0 == "\n" ? "↵" : Sanitizer.inert(String($0)) }
        var starts: [Int] = [0]     // starts[i] = column where grapheme i begins
        for piece in shown { starts.append((starts.last ?? 0) + DisplayWidth.of(piece)) }
        let cursorX = starts[cursor]
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
