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
/// takes a plain value. The rows are written through the real schema (so
/// its column affinities and NOT NULLs apply), read back with the storage's
/// `changes(after:)`, and rolled back.
enum ChangeRowsTarget {
    private static let changeDefaults: [DatabaseValue] = [
        "_defaultZone".databaseValue, "m1".databaseValue, "Message".databaseValue,
        1.databaseValue, .null, 1_700_000_000.0.databaseValue,
    ]
    private static let recordColumnCount = 7
    private static let maximumRows = 8

    private static let database: DatabaseQueue? = try? FuzzEntryPoints.makeDatabase()

    static func run(_ bytes: [UInt8]) -> String {
        guard let database else { return "no in-memory database" }
        let rows = InputPieces.split(bytes[...], at: InputPieces.row).prefix(maximumRows).map { row in
            InputPieces.split(row, at: InputPieces.unit).map(SQLValueInput.value)
        }
        do {
            return try database.inDatabase { db in
                var outcome = ""
                try db.inTransaction {
                    for values in rows { insert(values, into: db) }
                    do {
                        outcome = "read \(try FuzzEntryPoints.readChanges(in: db, limit: 100)) changes"
                    } catch {
                        outcome = "threw: \(error)"
                    }
                    return .rollback
                }
                return outcome
            }
        } catch {
            return "the harness failed: \(error)"
        }
    }

    /// Writes one change row, and its record when the input has the record's columns.
    private static func insert(_ values: [DatabaseValue], into db: Database) {
        var change = changeDefaults
        for (i, value) in values.prefix(change.count).enumerated() { change[i] = value }
        let record = values.dropFirst(change.count)
        do {
            try db.execute(sql: "INSERT INTO change (zone, name, type, kind, previous, at) VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: StatementArguments(change))
            guard record.count >= recordColumnCount else { return }
            try db.execute(sql: """
                INSERT OR REPLACE INTO record (zone, name, type, fields, created, modified, creator, modifier, tag)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: StatementArguments([change[0], change[1]] + record.prefix(recordColumnCount)))
        } catch {
            // The schema refused the row (a NOT NULL, say): a hostile member could not write it either.
        }
    }
}
