import Foundation
import RecordStore

extension ChatClient {
    private static let highlightsID = RecordID(recordName: "highlights")

    /// The most highlight words one user keeps.
    public static let maximumHighlights = 50

    /// What a person reads when a highlight word is refused.
    static let highlightRules = "A highlight word has 1 to 32 letters, digits, '_', '-' or '.'."

    /// My highlight words: those kept in my private database, then the configuration file's. They count as mentions of my handle.
    public func highlightWords() -> [String] {
        let stored = storedHighlights()
        return stored + configuredHighlights.filter { !stored.contains($0) }
    }

    private func storedHighlights() -> [String] {
        let stored = (try? container.privateDatabase.record(for: Self.highlightsID))?["words"]?.listValue ?? []
        return stored.compactMap(\.stringValue)
    }

    /// Refuses a word that cannot be a highlight word.
    public static func checkHighlight(_ word: String) throws(CommandError) {
        guard (1...32).contains(word.count), word.lowercased().allSatisfy(MentionMatcher.isWordPart) else {
            throw CommandError("'\(Sanitizer.inert(word))' cannot be a highlight word. \(Self.highlightRules)")
        }
    }

    /// What counts as a mention of me: my handle and my highlight words.
    public func mentionMatcher() -> MentionMatcher {
        MentionMatcher(handle: handle, highlights: highlightWords())
    }

    /// Adds a highlight word; returns the words after the change. Adding one already there changes nothing.
    @discardableResult
    public func addHighlight(_ word: String) throws -> [String] {
        let word = word.lowercased()
        try Self.checkHighlight(word)
        var words = storedHighlights()
        guard !words.contains(word), !configuredHighlights.contains(word) else { return highlightWords() }
        guard words.count < Self.maximumHighlights else {
            throw CommandError("You have \(words.count) highlight words, the most there can be; /highlight del one first.")
        }
        words.append(word)
        try saveHighlights(words)
        return highlightWords()
    }

    /// Removes a highlight word; returns the words after the change.
    @discardableResult
    public func removeHighlight(_ word: String) throws -> [String] {
        var words = storedHighlights()
        guard let index = words.firstIndex(of: word.lowercased()) else {
            if configuredHighlights.contains(word.lowercased()) {
                throw CommandError("'\(Sanitizer.inert(word))' comes from your configuration file; take it out there.")
            }
            throw CommandError("'\(Sanitizer.inert(word))' is not one of your highlight words; /highlight list shows them.")
        }
        words.remove(at: index)
        try saveHighlights(words)
        return highlightWords()
    }

    private func saveHighlights(_ words: [String]) throws {
        var record = Record(recordType: "Highlights", recordID: Self.highlightsID)
        record["words"] = .list(words.map(FieldValue.string))
        try container.privateDatabase.save(record, savePolicy: .allKeys)
    }
}
