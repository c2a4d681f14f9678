import Foundation
import GRDB

/// Compares a database's schema with the one RecordStore's own migrations make.
///
/// Anyone who can write a shared file can add a trigger that rewrites or
/// blocks other people's saves, a view, a table, or an index that makes
/// every insert fail. So the schema is checked when a database is opened
/// (and again whenever its schema cookie moves, before a write): every
/// object in `sqlite_master` must be one the migrations make, with the same
/// SQL, or an index exactly as a field mark makes it (`record_q:TYPE:KEY`,
/// `record_s:TYPE:KEY`). The expected schema
/// comes from running the migrations on an in-memory database, so a new
/// migration is covered without a list to keep up to date.
enum SchemaCheck {
    /// One entry of `sqlite_master`.
    struct Object: Hashable, Sendable {
        var type: String
        var name: String
        var table: String
        var sql: String?
    }

    /// The schema that the migrations make, by name; `nil` if the in-memory migration failed.
    static let expected: [String: Object]? = {
        guard let queue = try? DatabaseQueue() else { return nil }
        defer { try? KeptConnections.close(queue) }
        guard (try? Schema.migrator.migrate(queue)) != nil,
              let objects = try? queue.read(objects) else { return nil }
        return Dictionary(objects.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }()

    /// Starts building `expected` on another core, if there is one. It takes milliseconds, as every migration's statements
    /// are parsed and run, and whoever opens a container has the directory and its files to look at before
    /// the first check needs it; the check then waits only for what is left.
    static func buildExpectedInBackground() {
        OnAllCores.helpers.first?.run { _ = expected }
    }

    /// Tables SQLite itself adds when someone runs `ANALYZE`: statistics, which run no code.
    private static let statisticsTables: Set<String> = ["sqlite_stat1", "sqlite_stat4"]

    /// Throws `badDatabase`, naming the first object RecordStore did not make, if there is one.
    static func verify(_ db: GRDB.Database, path: String, naming: ContainerNaming) throws {
        let found = try problems(db, naming: naming)
        guard !found.isEmpty else { return }
        let named = found.prefix(3).joined(separator: "; ") + (found.count > 3 ? "; and \(found.count - 3) more" : "")
        throw StoreError(.badDatabase, "\(path) was changed outside \(naming.programName): \(named). \(naming.programName) refuses to use it, so that nothing planted in it runs; remove what is named here with sqlite3, or restore the file from a backup.")
    }

    /// Each object in `db`'s schema that RecordStore did not make, or that is missing or altered, one sentence each.
    static func problems(_ db: GRDB.Database, naming: ContainerNaming) throws -> [String] {
        guard let expected else {
            throw StoreError(.internalError, "\(naming.programName) could not build its own schema in memory to compare the file with.")
        }
        if try db.tableExists("grdb_migrations"), try Schema.migrator.hasBeenSuperseded(db) {
            return ["it was migrated by a newer version of \(naming.programName); upgrade this build"]
        }
        var problems: [String] = []
        var seen: Set<String> = []
        for object in try objects(db) {
            seen.insert(object.name)
            if let known = expected[object.name] {
                if known != object, !(isLibraryTable(known) && known.type == object.type && known.table == object.table) {
                    problems.append("the \(object.type) '\(DamagedRow.inert(object.name))' is not defined as \(naming.programName) defines it: \(DamagedRow.inert(object.sql ?? ""))")
                }
            } else if object.type == "table", statisticsTables.contains(object.name) {
                continue
            } else if object.type == "index", isFieldIndex(object) {
                continue
            } else {
                problems.append("it holds a \(object.type) '\(DamagedRow.inert(object.name))' that \(naming.programName) did not make: \(DamagedRow.inert(object.sql ?? ""))")
            }
        }
        for name in expected.keys.sorted() where !seen.contains(name) {
            problems.append("its \(expected[name]?.type ?? "object") '\(name)' is missing")
        }
        return problems
    }

    /// Whether SQLite, FTS5 or GRDB writes this table's SQL rather than our migrations: its text may differ between
    /// their versions, and a table alone runs nothing, so its name and type are what is compared.
    private static func isLibraryTable(_ object: Object) -> Bool {
        object.type == "table" && (object.name == "sqlite_sequence" || object.name == "grdb_migrations" || object.name.hasPrefix("record_search_"))
    }

    private static func objects(_ db: GRDB.Database) throws -> [Object] {
        let rows = try Row.fetchCursor(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
        var objects: [Object] = []
        // sqlite_master is SQLite's own table; still, nothing read from the file is trusted to have its type.
        while let row = try rows.next() {
            objects.append(Object(type: try StoredColumns.textIfAny(row, 0) ?? "?", name: try StoredColumns.textIfAny(row, 1) ?? "?",
                                  table: try StoredColumns.textIfAny(row, 2) ?? "?", sql: try StoredColumns.textIfAny(row, 3)))
        }
        return objects
    }

    /// Whether `object` is exactly an index that `SQLiteAccess.indexField` makes for a field mark.
    ///
    /// Its name gives the type and key, which must be identifiers, and its SQL
    /// must be what RecordStore writes for them, so it can do nothing that
    /// RecordStore's own index would not. Its row in `field_mark` is not required:
    /// a hand-edited mark is a damaged row (reported, skipped), not a reason to
    /// refuse the whole database.
    private static func isFieldIndex(_ object: Object) -> Bool {
        let parts = object.name.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard object.table == "record", parts.count == 3, Identifier.isValid(parts[1]), Identifier.isValid(parts[2]),
              let index = SQLiteAccess.fieldIndexes(key: parts[2], recordType: parts[1]).first(where: { $0.name == object.name }) else { return false }
        return object.sql == "CREATE INDEX \"\(index.name)\" \(index.definition)"
    }
}
