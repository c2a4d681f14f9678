import Foundation
import GRDB
import Testing
@testable import RecordStore

/// `TextTokens` must split and fold text as the SQLite engine's FTS5 table does, or a search finds
/// different messages on PostgreSQL, in the scan fallback and in memory than on SQLite.
@Suite struct TextTokensTests {
    /// The tokens FTS5's `unicode61 remove_diacritics 2` makes of `text`, in order, read back through `fts5vocab`'s instance table.
    private static func fts5Tokens(of text: String) throws -> [String] {
        try fts5Tokens(ofEach: [text])[0]
    }

    /// The tokens of each text, one row each.
    private static func fts5Tokens(ofEach texts: [String]) throws -> [[String]] {
        let db = try DatabaseQueue()
        return try db.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE t USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2')")
            try db.execute(sql: "CREATE VIRTUAL TABLE v USING fts5vocab (t, instance)")
            for (row, text) in texts.enumerated() {
                try db.execute(sql: "INSERT INTO t (rowid, body) VALUES (?, ?)", arguments: [row + 1, text])
            }
            var tokens = [[String]](repeating: [], count: texts.count)
            for row in try Row.fetchAll(db, sql: "SELECT doc, term FROM v ORDER BY doc, offset") {
                let doc: Int = row["doc"]
                tokens[doc - 1].append(row["term"])
            }
            return tokens
        }
    }

    @Test("Every ASCII character between two letters splits or joins them as FTS5 does")
    func asciiAgreesWithFTS5() throws {
        for value in UInt8(1)...127 {
            let text = "Ab\(Character(Unicode.Scalar(value)))Cd 42x"
            #expect(TextTokens.tokens(of: text) == (try Self.fts5Tokens(of: text)), "character \(value)")
        }
    }

    @Test("Latin accents, combining marks, other scripts and mixed words are folded as FTS5 folds them")
    func foldingAgreesWithFTS5() throws {
        let texts = [
            "Crème BRÛLÉE", "naïve café", "e\u{301}te\u{301}", "Ångström", "ÀÉÎÕÜ àéîõü", "Straße",
            "Привет, МИР", "日本語のテキスト", "t=1795868617859447741", "mixedÉtéAndASCII42",
            "snake_case and kebab-case", "emoji 👍 between", "tab\tnew\nline", "", "Ελληνικά ΆΈΉ", "йогурт ЁЛКА", "thumbs 👍🏽 up", "ΣΊΣΥΦΟΣ ς",
        ]
        for text in texts {
            #expect(TextTokens.tokens(of: text) == (try Self.fts5Tokens(of: text)), "\(text.debugDescription)")
        }
    }

    /// Latin letters lose their accents and Greek and Cyrillic ones keep theirs; a combining mark joins or splits as
    /// FTS5 decides; what FTS5's older Unicode tables do not know is a token as it stands. Every scalar of the first
    /// three planes and the tags block, between two ASCII letters, is asked of both.
    @Test("Every scalar of planes 0 to 2 splits and folds as FTS5 splits and folds it")
    func everyScalarAgreesWithFTS5() throws {
        let blocks: [ClosedRange<UInt32>] = [0x80...0x2FFFF, 0xE0000...0xE01EF]
        let texts = blocks.joined().compactMap(Unicode.Scalar.init).map { "a\(Character($0))b" }
        let expected = try Self.fts5Tokens(ofEach: texts)
        let differing = zip(texts, expected).filter { TextTokens.tokens(of: $0) != $1 }
        #expect(differing.isEmpty, "\(differing.count) differ, first: \(differing.prefix(12).map { "\($0.0.debugDescription): \(TextTokens.tokens(of: $0.0)) against \($0.1)" })")
    }
}
