import Foundation
import GRDB

/// Zones on SQLite: the `zone` table.
extension SQLiteAccess {
    func zoneNames() throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM zone ORDER BY created, name")
    }

    func zoneKeepsChanges(_ name: String) throws -> Bool? {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT changes FROM zone WHERE name = ?"), arguments: [name])
    }

    func createZone(_ name: String, date: Date, keepsChanges: Bool) throws {
        try db.cachedStatement(sql: """
            INSERT INTO zone (name, created, changes) VALUES (?, ?, ?)
            ON CONFLICT (name) DO UPDATE SET changes = excluded.changes
            """).execute(arguments: [name, date.timeIntervalSince1970, keepsChanges])
    }

    func removeZone(_ name: String) throws {
        try db.execute(sql: "DELETE FROM zone WHERE name = ?", arguments: [name])
    }
}
