import Foundation
import RecordStore

extension ChatClient {
    private static let highlightsID = RecordID(recordName: "highlights")

    /// The most highlight words one user keeps.
    public static let maximumHighlights = 50

    /// What a person reads when a highlight word is refused.
    static let highlightRules = "A highlight word has 1 to 32 letters, digits, '_', '-' or '.'."

    /// My highlight words, kept in my private database: they count as mentions of my handle.
    public func highlightWords() -> [String] {
        let stored = (try? container.privateDatabase.record(for: Self.highlightsID))?["words"]?.listValue ?? []
        return stored.compactMap(\.stringValue)
    }

    /// What counts as a mention of me: my handle and my highlight words.
    public func mentionMatcher() -> MentionMatcher {
        MentionMatcher(handle: handle, highlights: highlightWords())
    }

    /// Adds a highlight word; returns the words after the change. Adding one already there changes nothing.
    @discardableResult
    public func addHighlight(_ word: String) throws -> [String] {
        let word = word.lowercased()
        guard (1...32).contains(word.count), word.allSatisfy(MentionMatcher.isWordPart) else {
            throw CommandError("'\(Sanitizer.inert(word))' cannot be a highlight word. \(Self.highlightRules)")
        }
        var words = highlightWords()
        guard !words.contains(word) else { return words }
        guard words.count < Self.maximumHighlights else {
            throw CommandError("You have \(words.count) highlight words, the most there can be; /highlight del one first.")
        }
        words.append(word)
        try saveHighlights(words)
        return words
    }

    /// Removes a highlight word; returns the words after the change.
    @discardableResult
    public func removeHighlight(_ word: String) throws -> [String] {
        var words = highlightWords()
        guard let index = words.firstIndex(of: word.lowercased()) else {
            throw CommandError("'\(Sanitizer.inert(word))' is not one of your highlight words; /highlight list shows them.")
        }
        words.remove(at: index)
        try saveHighlights(words)
        return words
    }

    private func saveHighlights(_ words: [String]) throws {
        var record = Record(recordType: "Highlights", recordID: Self.highlightsID)
        record["words"] = .list(words.map(FieldValue.string))
        try container.privateDatabase.save(record, savePolicy: .allKeys)
    }
}
