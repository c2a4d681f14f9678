import GRDB

/// The tables in which a `log` engine's cache remembers what it replayed.
///
/// The cache is an ordinary RecordStore database in the user's private data
/// directory; these tables sit beside its records, and change in the same
/// transaction as they do, so a poll that fails leaves no half of itself behind.
enum LogCacheSchema {
    static func create(_ db: GRDB.Database) throws {
        try db.execute(sql: """
            CREATE TABLE log_read (
                log TEXT PRIMARY KEY NOT NULL,
                identity TEXT NOT NULL,
                offset INTEGER NOT NULL,
                malformed INTEGER NOT NULL DEFAULT 0,
                foreign_entries INTEGER NOT NULL DEFAULT 0
            ) WITHOUT ROWID;
            CREATE TABLE log_entry (
                zone TEXT NOT NULL,
                name TEXT NOT NULL,
                time INTEGER NOT NULL,
                client TEXT NOT NULL,
                account TEXT NOT NULL,
                kind INTEGER NOT NULL,
                type TEXT,
                fields TEXT,
                created REAL,
                modified REAL,
                tag TEXT,
                shown INTEGER NOT NULL DEFAULT 0,
                ignored INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (zone, name, time, client)
            ) WITHOUT ROWID;
            CREATE TABLE log_waiting (
                zone TEXT NOT NULL,
                target TEXT NOT NULL,
                holder TEXT NOT NULL,
                PRIMARY KEY (zone, target, holder)
            ) WITHOUT ROWID;
            CREATE INDEX log_waiting_by_holder ON log_waiting (zone, holder);
            CREATE TABLE log_deleted (
                zone TEXT NOT NULL,
                name TEXT NOT NULL,
                time INTEGER NOT NULL,
                PRIMARY KEY (zone, name)
            ) WITHOUT ROWID;
            """)
    }
}
