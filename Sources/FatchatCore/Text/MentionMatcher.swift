/// Whether a text mentions me: my handle, or one of my highlight words, as a whole word, ignoring case.
///
/// A word is a run of letters, digits, `_`, `-` and `.`; so `ada`, `@ada`, `ada:` and `ada.`
/// mention ada, and `adam` does not. The client, its notifications and the bot share it.
public struct MentionMatcher: Sendable, Equatable {
    /// The lowercased words that count: the handle first, then the highlight words.
    public let words: [String]

    /// A matcher of `handle` and `highlights`, each once, ignoring case; an empty one matches nothing.
    public init(handle: String, highlights: [String] = []) {
        var words: [String] = []
        for word in [handle] + highlights where !word.isEmpty && !words.contains(word.lowercased()) {
            words.append(word.lowercased())
        }
        self.words = words
    }

    /// Whether a character belongs to a word.
    public static func isWordPart(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" || c == "-" || c == "." }

    /// Whether `text` holds one of the words as a whole word; a word that ends a sentence (`ada.`) counts.
    public func matches(_ text: String) -> Bool {
        guard !words.isEmpty else { return false }
        for token in text.lowercased().split(whereSeparator: { !Self.isWordPart($0) }) {
            let trimmed = token.trimmingDots
            if words.contains(where: { $0 == token || $0 == trimmed }) { return true }
        }
        return false
    }
}

extension Substring {
    fileprivate var trimmingDots: Substring {
        var copy = self
        while copy.last == "." { copy.removeLast() }
        while copy.first == "." { copy.removeFirst() }
        return copy
    }
}
