import Foundation

/// Splits text into search tokens the way FTS5's `unicode61 remove_diacritics 2` tokenizer does.
///
/// A token is a run of letters, digits and private-use characters (combining
/// marks stay inside it); it is folded to lower case without accents. A
/// PostgreSQL save makes a record's search words with this, and the scan
/// fallback and the in-memory evaluator use it, so they agree with FTS5
/// (`TextTokensTests` asks FTS5 itself). They differ on accents outside the
/// Latin letters, which FTS5 keeps.
enum TextTokens {
    static func tokens(of text: String) -> [String] {
        var out: [String] = []
        var token = String.UnicodeScalarView()
        // A token of ASCII only folds to its lower case: it has nothing to decompose, and no marks.
        var ascii = true
        func flush() {
            if !token.isEmpty { out.append(ascii ? String(token).lowercased() : fold(String(token))) }
            token = String.UnicodeScalarView()
            ascii = true
        }
        for scalar in text.unicodeScalars {
            if scalar.isASCII ? isASCIILetterOrDigit(scalar) : isTokenScalar(scalar) {
                token.append(scalar)
                if !scalar.isASCII { ascii = false }
            } else {
                flush()
            }
        }
        flush()
        return out.filter { !$0.isEmpty }
    }

    /// The ASCII scalars of the categories `isTokenScalar` takes, told without looking the category up.
    private static func isASCIILetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        default: false
        }
    }

    private static func isTokenScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .privateUse, .nonspacingMark:
            true
        default:
            false
        }
    }

    private static func fold(_ token: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in token.decomposedStringWithCanonicalMapping.unicodeScalars
        where scalar.properties.generalCategory != .nonspacingMark {
            scalars.append(scalar)
        }
        return String(scalars).lowercased()
    }

    /// Whether every token of `query` appears among the tokens of `texts`.
    static func matches(_ query: [String], in texts: [String]) -> Bool {
        guard !query.isEmpty else { return false }
        let present = Set(texts.flatMap { tokens(of: $0) })
        return query.allSatisfy(present.contains)
    }
}
