import Foundation

/// Splits text into search tokens the way FTS5's `unicode61 remove_diacritics 2` tokenizer does.
///
/// A token is a run of letters, numbers and private-use characters, and of the
/// combining marks FTS5 counts as diacritics; it is case folded, and a Latin
/// letter loses its accents (a Greek or Cyrillic one keeps them). A
/// PostgreSQL save makes a record's search words with this, and the scan
/// fallback and the in-memory evaluator use it, so they agree with FTS5
/// (`TextTokensTests` asks FTS5 itself).
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

    /// What FTS5 takes into a token: letters, numbers, private use, and what its Unicode tables do not know
    /// (they are of version 6.1, so to FTS5 a scalar assigned since is unassigned), but of the nonspacing marks
    /// only the diacritics it folds away.
    private static func isTokenScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1885, 0x1886: return true  // letters in FTS5's tables, marks since Unicode 9
        case 0x19B0...0x19C0, 0x19C8, 0x19C9, 0x1CF2, 0x1CF3: return false  // marks there, letters since
        case 0xFFFE, 0xFFFF: return false  // noncharacters FTS5 counts as separators
        default: break
        }
        if isUnknownToFTS5(scalar) { return true }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .privateUse, .unassigned:
            return true
        case .nonspacingMark:
            return isFTS5Diacritic(scalar)
        default:
            return false
        }
    }

    private static func isUnknownToFTS5(_ scalar: Unicode.Scalar) -> Bool {
        guard let age = scalar.properties.age else { return true }
        return age.major > 6 || (age.major == 6 && age.minor > 1)
    }

    /// The combining marks FTS5 keeps inside a token and then drops: graves, acutes, circumflexes, tildes,
    /// macrons, breves, dots, diaereses, hooks, rings, carons, horns, cedillas and ogoneks, and a few below.
    private static func isFTS5Diacritic(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x300...0x304, 0x306...0x30C, 0x30F, 0x311, 0x31B, 0x323...0x328, 0x32D, 0x32E, 0x330, 0x331: true
        default: false
        }
    }

    /// Each scalar as FTS5 folds it: case folded (one scalar for one), FTS5's diacritics dropped, and a Latin
    /// letter whose canonical decomposition is an ASCII letter with accents made that letter; every other
    /// letter keeps its accents.
    private static func fold(_ token: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in token.unicodeScalars where !isFTS5Diacritic(scalar) {
            if isUnknownToFTS5(scalar) {
                scalars.append(scalar)
                continue
            }
            let folded = caseFolded(scalar)
            scalars.append(isLatinWithAccents(folded) ? asciiBase(of: folded) ?? folded : folded)
        }
        return String(scalars)
    }

    /// Unicode's simple case folding: the lower case where it is another single scalar (every capital), else the
    /// full folding where that is one scalar (so "ς" is "σ", "ſ" is "s"), else the scalar itself ("ß", "İ" stay).
    /// Foundation's folding, which builds strings, is asked only for the few the lower case leaves alone.
    private static func caseFolded(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        guard scalar.properties.changesWhenCaseFolded else { return scalar }
        if let lower = single(scalar.properties.lowercaseMapping), lower != scalar { return lower }
        return single(String(scalar).folding(options: .caseInsensitive, locale: nil)) ?? scalar
    }

    private static func single(_ text: String) -> Unicode.Scalar? {
        let scalars = text.unicodeScalars
        return scalars.count == 1 ? scalars.first : nil
    }

    /// Latin-1 Supplement, Latin Extended-A and -B, and Latin Extended Additional, less "ǡ", which FTS5's table lacks.
    private static func isLatinWithAccents(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1E1: false
        case 0xC0...0x24F, 0x1E00...0x1EFF: true
        default: false
        }
    }

    /// The lower-case ASCII letter a scalar decomposes to, if it does.
    private static func asciiBase(of scalar: Unicode.Scalar) -> Unicode.Scalar? {
        guard let base = String(scalar).decomposedStringWithCanonicalMapping.unicodeScalars.first else { return nil }
        switch base.value {
        case 0x41...0x5A: return Unicode.Scalar(base.value + 0x20)
        case 0x61...0x7A: return base
        default: return nil
        }
    }

    /// Whether every token of `query` appears among the tokens of `texts`.
    static func matches(_ query: [String], in texts: [String]) -> Bool {
        guard !query.isEmpty else { return false }
        let present = Set(texts.flatMap { tokens(of: $0) })
        return query.allSatisfy(present.contains)
    }
}
