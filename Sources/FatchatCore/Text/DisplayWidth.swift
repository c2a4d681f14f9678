/// The number of terminal cells a grapheme cluster takes: the one width function of the client.
///
/// Swift's standard library has no East Asian Width property, so wide ranges come from a
/// small table (Unicode 15 `W`/`F` ranges outside emoji) plus `Emoji_Presentation`.
/// A cluster takes the width of its first scalar, widened to 2 by VS16 (U+FE0F) after an
/// emoji or by a zero-width joiner between emoji; combining marks add nothing.
public enum DisplayWidth {
    /// Cells taken by one grapheme cluster: 0 for controls and lone format characters, else 1 or 2.
    public static func of(_ grapheme: Character) -> Int {
        let scalars = grapheme.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if isControl(first) { return 0 }
        if first.properties.generalCategory == .format, scalars.count == 1 { return 0 }
        if isWide(first) { return 2 }
        if first.properties.isEmoji, scalars.contains(where: { $0.value == 0xFE0F || $0.value == 0x200D || $0.value == 0x20E3 }) {
            return 2
        }
        return 1
    }

    /// Cells taken by a whole string, cluster by cluster.
    public static func of(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// The longest prefix of `text` that fits in `columns` cells, never splitting a wide grapheme.
    public static func prefix(_ text: some StringProtocol, fitting columns: Int) -> String {
        var used = 0
        var result = ""
        for grapheme in text {
            let w = of(grapheme)
            if used + w > columns { break }
            used += w
            result.append(grapheme)
        }
        return result
    }

    /// C0 controls, DEL and C1 controls.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0)
    }

    /// True for scalars drawn two cells wide on their own.
    static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x1100 { return false }
        if scalar.properties.isEmojiPresentation { return true }
        return wideRanges.contains { $0.contains(v) }
    }

    /// East Asian Wide and Fullwidth ranges that are not emoji.
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F,   // Hangul Jamo initial consonants
        0x2329...0x232A,   // angle brackets
        0x2E80...0x303E,   // CJK radicals, Kangxi, CJK symbols and punctuation
        0x3041...0x33FF,   // Hiragana, Katakana, Bopomofo, Hangul compatibility, CJK compatibility
        0x3400...0x4DBF,   // CJK extension A
        0x4E00...0x9FFF,   // CJK unified ideographs
        0xA000...0xA4CF,   // Yi
        0xA960...0xA97F,   // Hangul Jamo extended A
        0xAC00...0xD7A3,   // Hangul syllables
        0xF900...0xFAFF,   // CJK compatibility ideographs
        0xFE10...0xFE19,   // vertical forms
        0xFE30...0xFE6F,   // CJK compatibility forms, small forms
        0xFF00...0xFF60,   // fullwidth forms
        0xFFE0...0xFFE6,   // fullwidth signs
        0x16FE0...0x16FE4, // ideographic symbols
        0x17000...0x18CFF, // Tangut, Khitan
        0x1B000...0x1B2FF, // Kana supplement, Nushu
        0x1F200...0x1F2FF, // enclosed ideographic supplement
        0x20000...0x2FFFD, // CJK extensions B–F
        0x30000...0x3FFFD, // CJK extension G and later
    ]
}
