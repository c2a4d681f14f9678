import Foundation
import GRDB

/// The tables of a RecordStore database, as GRDB migrations.
///
/// A build knows the migrations up to its own format. A file migrated by a
/// newer build holds identifiers this one does not know, and is refused with
/// `incompatibleVersion` rather than touched.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-records") { db in
            try db.execute(sql: """
                CREATE TABLE fatchat_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                CREATE TABLE zone (name TEXT PRIMARY KEY NOT NULL, created REAL NOT NULL);
                CREATE TABLE record (
                    id INTEGER PRIMARY KEY,
                    zone TEXT NOT NULL,
                    name TEXT NOT NULL,
                    type TEXT NOT NULL,
                    fields TEXT NOT NULL,
                    created REAL NOT NULL,
                    modified REAL NOT NULL,
                    creator TEXT NOT NULL,
                    modifier TEXT NOT NULL,
                    tag TEXT NOT NULL,
                    UNIQUE (zone, name)
                );
                CREATE INDEX record_by_type_created ON record (type, created);
                CREATE INDEX record_by_type_modified ON record (type, modified);
                CREATE TABLE reference (
                    holder INTEGER NOT NULL REFERENCES record (id) ON DELETE CASCADE,
                    zone TEXT NOT NULL,
                    target TEXT NOT NULL,
                    cascade INTEGER NOT NULL
                );
                CREATE INDEX reference_by_target ON reference (zone, target);
                CREATE INDEX reference_by_holder ON reference (holder);
                CREATE TABLE asset_use (
                    hash TEXT NOT NULL,
                    record INTEGER NOT NULL REFERENCES record (id) ON DELETE CASCADE,
                    PRIMARY KEY (hash, record)
                ) WITHOUT ROWID;
                CREATE INDEX asset_use_by_record ON asset_use (record);
                CREATE TABLE change (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    zone TEXT NOT NULL,
                    name TEXT NOT NULL,
                    type TEXT NOT NULL,
                    kind INTEGER NOT NULL,
                    previous TEXT,
                    at REAL NOT NULL
                );
                CREATE INDEX change_by_zone ON change (zone, seq);
                """)
            try db.execute(sql: "INSERT INTO zone (name, created) VALUES (?, ?)",
                           arguments: [ZoneID.defaultZoneName, Date().timeIntervalSince1970])
            try db.execute(sql: "INSERT INTO fatchat_meta (key, value) VALUES ('database_id', ?), ('pruned_through', '0')",
                           arguments: [UUID().uuidString])
        }
        migrator.registerMigration("v2-queries") { db in
            try db.execute(sql: """
                CREATE TABLE field_mark (
                    type TEXT NOT NULL,
                    key TEXT NOT NULL,
                    options INTEGER NOT NULL,
                    PRIMARY KEY (type, key)
                ) WITHOUT ROWID;
                CREATE VIRTUAL TABLE record_search USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2');
                CREATE TABLE subscription (
                    owner TEXT NOT NULL,
                    id TEXT NOT NULL,
                    body TEXT NOT NULL,
                    PRIMARY KEY (owner, id)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v3-partial-field-indexes") { db in
            // Field indexes cover only their own type's records from now on (see `SQLiteAccess.indexField`).
            // Marks that someone wrote by hand with other types of values get no index.
            for row in try Row.fetchAll(db, sql: "SELECT type, key, options FROM field_mark") {
                guard case .string(let type) = try StoredColumns.value(row, 0).storage, case .string(let key) = try StoredColumns.value(row, 1).storage,
                      case .int64(let bits) = try StoredColumns.value(row, 2).storage,
                      Identifier.isValid(type), Identifier.isValid(key) else { continue }
                try SQLiteAccess.indexField(db, key: key, recordType: type, options: [])
                try SQLiteAccess.indexField(db, key: key, recordType: type, options: FieldIndexOptions(rawValue: Int(bits)))
            }
        }
        migrator.registerMigration("v4-zone-capabilities") { db in
            // Whether a zone keeps a change log (CloudKit's `fetchChanges` capability); existing zones do.
            try db.execute(sql: "ALTER TABLE zone ADD COLUMN changes INTEGER NOT NULL DEFAULT 1")
        }
        migrator.registerMigration("v5-subscription-parents") { db in
            // A subscription may belong to a record, and goes when that record is deleted (see `deleteSubscriptions`).
            try db.execute(sql: """
                ALTER TABLE subscription ADD COLUMN parent_zone TEXT;
                ALTER TABLE subscription ADD COLUMN parent_name TEXT;
                ALTER TABLE subscription ADD COLUMN parent_created REAL;
                CREATE INDEX subscription_by_parent ON subscription (parent_zone, parent_name);
                """)
            try SQLiteAccess.adoptParents(db)
        }
        migrator.registerMigration("v6-log-replay") { db in
            // What the `log` engine's cache keeps of the logs it replayed (see `LogCacheSchema`); empty elsewhere.
            try LogCacheSchema.create(db)
        }
        return migrator
    }

    /// Refuses files that are not ours or are newer than this build, then brings ours up to date and marks it.
    ///
    /// `DatabaseFile.inspect` has already looked at the file without writing;
    /// these checks repeat on the writer's own connection, in case the file
    /// changed in between. `naming` words the errors.
    static func prepare(_ writer: any DatabaseWriter, path: String, naming: ContainerNaming) throws {
        let migrator = self.migrator
        let state = try writer.read { db -> (foreign: Bool, superseded: Bool, complete: Bool, marked: Bool) in
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            let mark = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
            let foreign = !tables.contains("fatchat_meta") || (mark != 0 && mark != DatabaseFile.applicationID)
            guard !foreign, try db.tableExists("grdb_migrations") else { return (foreign, false, false, false) }
            return (false, try migrator.hasBeenSuperseded(db), try migrator.hasCompletedMigrations(db), mark == DatabaseFile.applicationID)
        }
        if state.foreign {
            throw StoreError(.badDatabase, "\(path) is an SQLite database, but not a \(naming.programName) one; it was left untouched. Point the container somewhere else.")
        }
        if state.superseded {
            throw StoreError(.incompatibleVersion, "\(path) was written by a newer version of \(naming.programName); upgrade this build to open it. The file was left untouched.")
        }
        if state.complete {
            // A file an earlier build made gets the mark once, on its first open by this one.
            if !state.marked { try writer.writeWithoutTransaction { try DatabaseFile.mark($0) } }
            return
        }
        // Several processes may open a new file at once. Each migration runs in
        // its own IMMEDIATE transaction, so a loser fails cleanly: check again.
        for attempt in 0..<20 {
            do {
                try migrator.migrate(writer)
                try writer.writeWithoutTransaction { try DatabaseFile.mark($0) }
                return
            } catch {
                let done = (try? writer.read { try migrator.hasCompletedMigrations($0) }) ?? false
                if done { return }
                if attempt == 19 { throw error }
                usleep(50_000)
            }
        }
    }
}
