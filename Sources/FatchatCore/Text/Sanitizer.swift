/// Makes text from other users inert: nothing in the result can act on a terminal.
///
/// C0 controls and DEL become caret notation (`^[`, `^M`, `^?`), C1 controls become `<9b>`,
/// TAB becomes spaces, and bidi embeddings, overrides and isolates are removed, as are
/// other lone format characters. Joiners and variation selectors inside a grapheme cluster stay.
public enum Sanitizer {
    /// Spaces that stand for one TAB.
    public static let tabSpaces = "    "

    /// The inert form of `text`; with `keepingNewlines`, LF stays a line break for the wrapper.
    public static func inert(_ text: String, keepingNewlines: Bool = false) -> String {
        if isClean(text, keepingNewlines: keepingNewlines) { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v == 0x0A, keepingNewlines {
                out.append(scalar)
            } else if v == 0x09 {
                out.append(contentsOf: tabSpaces.unicodeScalars)
            } else if v < 0x20 {
                out.append("^")
                out.append(Unicode.Scalar(UInt8(v + 0x40)))
            } else if v == 0x7F {
                out.append(contentsOf: "^?".unicodeScalars)
            } else if v >= 0x80, v < 0xA0 {
                out.append(contentsOf: "<\(String(v, radix: 16))>".unicodeScalars)
            } else if isBidiControl(v) {
                continue
            } else {
                out.append(scalar)
            }
        }
        var result = String(out)
        // A format character left standing alone (U+200B, a stray ZWJ, BOM) would draw as nothing.
        if result.contains(where: { DisplayWidth.of($0) == 0 && $0 != "\n" }) {
            result = String(result.filter { DisplayWidth.of($0) > 0 || $0 == "\n" })
        }
        return result
    }

    /// True for the scalars that reorder text: LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI, LRM, RLM, ALM.
    static func isBidiControl(_ v: UInt32) -> Bool {
        (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v) || v == 0x200E || v == 0x200F || v == 0x061C
    }

    /// Fast path: plain printable text needs no copy.
    private static func isClean(_ text: String, keepingNewlines: Bool) -> Bool {
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v < 0x20 { if !(keepingNewlines && v == 0x0A) { return false } }
            else if v >= 0x7F && v < 0xA0 { return false }
            else if v >= 0x200B && v <= 0x206F { return false }
            else if v == 0x061C || v == 0xFEFF || v == 0xAD { return false }
            else if v >= 0xE0000 { return false }
        }
        return true
    }
}
