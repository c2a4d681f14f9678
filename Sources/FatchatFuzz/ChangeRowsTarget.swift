import Foundation
import GRDB
@_spi(Fuzzing) import RecordStore

/// Change-log rows, and the records they name, holding whatever values a hostile member can store in them.
///
/// Input: rows separated by RS; in each row, columns separated by US, each
/// spelled as `SQLValueInput` reads it:
/// `zone, name, type, kind, previous, at` of the `change` row, then
/// optionally `type, fields, created, modified, creator, modifier, tag` of
/// the `record` row with the same zone and name. A missing change column
/// takes a plain value. The rows are written, read back with the storage's
/// `changes(after:)`, and rolled back.
///
/// They are written through Fatchat's schema, whose column affinities and
/// NOT NULLs apply as they do to a member's `sqlite3`, or through a copy of
/// it without NOT NULL: the file of a member who rewrote the schema, which
/// only the schema check of issue 11 item 8 keeps out. That one is a target
/// of its own, so that its many NULL traps do not keep the fuzzer from
/// what lies past them.
enum ChangeRowsTarget {
    /// Which tables the rows go into.
    enum Schema {
        /// Fatchat's schema as `Schema.migrator` makes it.
        case asMade
        /// The `change` and `record` tables without their NOT NULL constraints.
        case withoutNotNull
    }

    private static let changeDefaults: [DatabaseValue] = [
        "_defaultZone".databaseValue, "m1".databaseValue, "Message".databaseValue,
        1.databaseValue, .null, 1_700_000_000.0.databaseValue,
    ]
    private static let recordColumnCount = 7
    private static let maximumRows = 8

    private static let database: DatabaseQueue? = try? FuzzEntryPoints.makeDatabase()

    /// The `change` and `record` tables of `database` without their NOT NULL constraints.
    private static let withoutNotNull: DatabaseQueue? = {
        guard let database, let queue = try? DatabaseQueue() else { return nil }
        do {
            let tables = try database.read { db in
                try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name IN ('change', 'record')")
            }
            try queue.write { db in
                for sql in tables { try db.execute(sql: sql.replacingOccurrences(of: "NOT NULL", with: "")) }
            }
            return queue
        } catch {
            return nil
        }
    }()

    static func run(_ bytes: [UInt8], schema: Schema) -> String {
        guard let queue = schema == .asMade ? database : withoutNotNull else { return "no in-memory database" }
        let rows = InputPieces.split(bytes[...], at: InputPieces.row).prefix(maximumRows).map { row in
            InputPieces.split(row, at: InputPieces.unit).map(SQLValueInput.value)
        }
        do {
            return try read(rows, in: queue) ?? "the schema refused a row"
        } catch {
            return "the harness failed: \(error)"
        }
    }

    /// Writes `rows`, reads the change log back, and rolls back; nil when the schema refused a row.
    private static func read(_ rows: [[DatabaseValue]], in queue: DatabaseQueue) throws -> String? {
        try queue.inDatabase { db in
            var outcome: String?
            try db.inTransaction {
                do {
                    for values in rows { try insert(values, into: db) }
                } catch {
                    return .rollback
                }
                do {
                    outcome = "read \(try FuzzEntryPoints.readChanges(in: db, limit: 100)) changes"
                } catch {
                    outcome = "threw: \(error)"
                }
                return .rollback
            }
            return outcome
        }
    }

    /// Writes one change row, and its record when the input has the record's columns.
    private static func insert(_ values: [DatabaseValue], into db: Database) throws {
        var change = changeDefaults
        for (i, value) in values.prefix(change.count).enumerated() { change[i] = value }
        let record = values.dropFirst(change.count)
        try db.execute(sql: "INSERT INTO change (zone, name, type, kind, previous, at) VALUES (?, ?, ?, ?, ?, ?)",
                       arguments: StatementArguments(change))
        guard record.count >= recordColumnCount else { return }
        try db.execute(sql: """
            INSERT OR REPLACE INTO record (zone, name, type, fields, created, modified, creator, modifier, tag)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: StatementArguments([change[0], change[1]] + record.prefix(recordColumnCount)))
    }
}
