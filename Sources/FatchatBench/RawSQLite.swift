import Foundation
import GRDB

/// The raw-SQLite baselines: the same rows with no RecordStore in between.
///
/// Same journal mode and synchronous setting as a local-mode container (WAL,
/// `synchronous = NORMAL`, a busy timeout, writes in `BEGIN IMMEDIATE`).
enum RawSQLite {
    static func open(_ path: String) throws -> DatabaseQueue {
        var config = Configuration()
        config.busyMode = .timeout(30)
        config.journalMode = .wal
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        return try DatabaseQueue(path: path, configuration: config)
    }

    /// A message table shaped like the chat's: channel, handle, text, date, with a (channel, date) index and FTS5.
    static func create(_ path: String) throws {
        let queue = try open(path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS message (
                    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, channel TEXT NOT NULL,
                    handle TEXT NOT NULL, text TEXT NOT NULL, created REAL NOT NULL);
                CREATE INDEX IF NOT EXISTS message_by_channel ON message (channel, created);
                CREATE VIRTUAL TABLE IF NOT EXISTS message_search USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2');
                """)
        }
    }

    /// Inserts one message and its search row; call inside a transaction. The statements are prepared
    /// once per connection, as RecordStore's are.
    static func insert(_ db: Database, name: String, channel: String, handle: String, text: String) throws {
        try db.cachedStatement(sql: "INSERT INTO message (name, channel, handle, text, created) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [name, channel, handle, text, Date().timeIntervalSince1970])
        try db.cachedStatement(sql: "INSERT INTO message_search (rowid, body) VALUES (last_insert_rowid(), ?)").execute(arguments: [text])
    }

    /// Inserts `count` messages in transactions of 400; returns rows per second. Their names are random, as
    /// the store's record names are: keys in no order cost an index more than keys that come in order.
    static func seed(_ path: String, count: Int, channels: Int) throws -> Double {
        try create(path)
        let queue = try open(path)
        var generator = TextGenerator()
        let start = Clock.monotonic()
        for first in stride(from: 0, to: count, by: 400) {
            try queue.inTransaction(.immediate) { db in
                for i in first..<min(first + 400, count) {
                    let channel = generator.channel(for: i, of: channels)
                    try insert(db, name: Seeder.recordName(), channel: "channel.bench-\(channel)", handle: "user\(i % 10)", text: generator.text(for: i))
                }
                return .commit
            }
        }
        return Double(count) / (Double(Clock.monotonic() - start) / 1e9)
    }

    /// Counts the messages in a raw database.
    static func count(_ path: String) throws -> Int {
        try open(path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM message") ?? 0 }
    }
}
