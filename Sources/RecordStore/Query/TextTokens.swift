import Foundation

/// Splits text into search tokens the way FTS5's `unicode61 remove_diacritics 2` tokenizer does.
///
/// A token is a run of letters, digits and private-use characters (combining
/// marks stay inside it); it is folded to lower case without accents. The
/// scan fallback and the in-memory evaluator use this, so they agree with FTS5.
enum TextTokens {
    static func tokens(of text: String) -> [String] {
        var out: [String] = []
        var token = String.UnicodeScalarView()
        func flush() {
            if !token.isEmpty { out.append(fold(String(token))) }
            token = String.UnicodeScalarView()
        }
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                 .decimalNumber, .letterNumber, .otherNumber, .privateUse, .nonspacingMark:
                token.append(scalar)
            default:
                flush()
            }
        }
        flush()
        return out.filter { !$0.isEmpty }
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
