import Foundation
import GRDB

/// Full-text search on SQLite: the FTS5 rows of records whose types have searchable fields.
extension SQLiteAccess {
    /// Rebuilds the search text of every record of a type, after its searchable fields changed.
    func reindexSearchText(recordType: String) throws {
        try db.execute(sql: "DELETE FROM record_search WHERE rowid IN (SELECT id FROM record WHERE type = ?)", arguments: [recordType])
        let keys = try searchableKeys(of: recordType)
        guard !keys.isEmpty else { return }
        let rows = try Row.fetchCursor(db, sql: "SELECT id, zone, fields FROM record WHERE type = ?", arguments: [recordType])
        while let row = try rows.next() {
            try StoredColumns.skippingDamage {
                try StoredColumns.decoding("record", key: "rowid \(StoredColumns.label(row, 0))") {
                    let rowID = try StoredColumns.integer(row, 0, "id")
                    let zone = ZoneID(zoneName: try StoredColumns.text(row, 1, "zone"))
                    let fields = try FieldCoding.decode(try StoredColumns.fieldsText(row, 2, "fields"), zone: zone, assetsDirectory: assets, keys: Set(keys))
                    try insertSearchText(Self.searchText(fields, keys: keys), rowID: rowID)
                }
            }
        }
    }

    /// Keeps the FTS5 row of a saved record in step with its searchable string fields.
    ///
    /// Only types with searchable fields have FTS5 rows (`reindexSearchText`
    /// removes a type's rows when its last searchable mark goes), so other
    /// types cost one cached lookup.
    func indexSearchText(of record: Record, rowID: Int64, isNew: Bool, keys known: [String]? = nil) throws {
        let keys = try known ?? searchableKeys(of: record.recordType)
        guard !keys.isEmpty else { return }
        if !isNew { try db.cachedStatement(sql: "DELETE FROM record_search WHERE rowid = ?").execute(arguments: [rowID]) }
        try insertSearchText(Self.searchText(record.fields, keys: keys), rowID: rowID)
    }

    /// Drops a removed record's search text; only types with searchable fields have any.
    func removeSearchText(of recordType: String, rowID: Int64) throws {
        guard try !searchableKeys(of: recordType).isEmpty else { return }
        try db.cachedStatement(sql: "DELETE FROM record_search WHERE rowid = ?").execute(arguments: [rowID])
    }

    private func insertSearchText(_ text: String, rowID: Int64) throws {
        guard !text.isEmpty else { return }
        try db.cachedStatement(sql: "INSERT INTO record_search (rowid, body) VALUES (?, ?)").execute(arguments: [rowID, text])
    }

    private static func searchText(_ fields: [String: FieldValue], keys: [String]) -> String {
        keys.compactMap { fields[$0]?.stringValue }.joined(separator: "\n")
    }
}
