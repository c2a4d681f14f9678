import FatchatCore

/// Greedy word wrapping by display width, over grapheme clusters.
///
/// Lines break after spaces; a word longer than a line is broken inside; LF forces a break.
/// A wide grapheme never straddles the edge. Spaces at a break are dropped.
public enum TextWrapper {
    /// Wraps `text` into ranges of grapheme indices, the first line `firstWidth` wide, the rest `width`.
    public static func lineRanges(_ graphemes: [Character], firstWidth: Int, width: Int) -> [Range<Int>] {
        var lines: [Range<Int>] = []
        var start = 0
        var limit = max(1, firstWidth)
        let restLimit = max(1, width)
        let count = graphemes.count
        while start < count || lines.isEmpty {
            var used = 0
            var index = start
            var lastBreak: Int?   // index of a space where this line may end
            var hardBreak = false
            while index < count {
                let g = graphemes[index]
                if g == "\n" { hardBreak = true; break }
                let w = max(DisplayWidth.of(g), g == " " ? 1 : 0)
                if used + w > limit { break }
                if g == " " { lastBreak = index }
                used += w
                index += 1
            }
            var end = index
            var next = index
            if hardBreak {
                next = index + 1
            } else if index < count {
                if graphemes[index] == " " {
                    next = index
                } else if let lastBreak, lastBreak > start {
                    end = lastBreak
                    next = lastBreak
                } else if index == start {
                    // Not even one grapheme fits (a wide grapheme in a 1-cell line): take it anyway.
                    end = index + 1
                    next = end
                }
            }
            // Trailing spaces at a soft break belong to no line.
            while end > start, graphemes[end - 1] == " ", !hardBreak, index < count { end -= 1 }
            lines.append(start..<end)
            if !hardBreak { while next < count, graphemes[next] == " " { next += 1 } }
            start = next
            limit = restLimit
            if hardBreak, start == count { lines.append(start..<start) }
        }
        return lines
    }

    /// Wraps a string to `width` cells, every line the same width.
    public static func wrap(_ text: String, width: Int) -> [String] {
        let graphemes = Array(text)
        return lineRanges(graphemes, firstWidth: width, width: width).map { String(graphemes[$0]) }
    }
}
