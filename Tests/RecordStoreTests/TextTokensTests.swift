import Foundation
import GRDB
import Testing
@testable import RecordStore

/// `TextTokens` must split and fold text as the SQLite engine's FTS5 table does, or a search finds
/// different messages on PostgreSQL, in the scan fallback and in memory than on SQLite.
@Suite struct TextTokensTests {
    /// The tokens FTS5's `unicode61 remove_diacritics 2` makes of `text`, in order, read back through `fts5vocab`'s instance table.
    private static func fts5Tokens(of text: String) throws -> [String] {
        let db = try DatabaseQueue()
        return try db.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE t USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2')")
            try db.execute(sql: "CREATE VIRTUAL TABLE v USING fts5vocab (t, instance)")
            try db.execute(sql: "INSERT INTO t (body) VALUES (?)", arguments: [text])
            return try String.fetchAll(db, sql: "SELECT term FROM v ORDER BY offset")
        }
    }

    @Test("Every ASCII character between two letters splits or joins them as FTS5 does")
    func asciiAgreesWithFTS5() throws {
        for value in UInt8(1)...127 {
            let text = "Ab\(Character(Unicode.Scalar(value)))Cd 42x"
            #expect(TextTokens.tokens(of: text) == (try Self.fts5Tokens(of: text)), "character \(value)")
        }
    }

    /// Not here, as they differ: FTS5 strips accents from Latin letters only, where `TextTokens` strips them from
    /// every precomposed letter (Greek "ά", Cyrillic "й"), and FTS5 keeps an emoji's skin-tone modifier as a token.
    @Test("Latin accents, combining marks, other scripts and mixed words are folded as FTS5 folds them")
    func foldingAgreesWithFTS5() throws {
        let texts = [
            "Crème BRÛLÉE", "naïve café", "e\u{301}te\u{301}", "Ångström", "ÀÉÎÕÜ àéîõü", "Straße",
            "Привет, МИР", "日本語のテキスト", "t=1795868617859447741", "mixedÉtéAndASCII42",
            "snake_case and kebab-case", "emoji 👍 between", "tab\tnew\nline", "",
        ]
        for text in texts {
            #expect(TextTokens.tokens(of: text) == (try Self.fts5Tokens(of: text)), "\(text.debugDescription)")
        }
    }
}
