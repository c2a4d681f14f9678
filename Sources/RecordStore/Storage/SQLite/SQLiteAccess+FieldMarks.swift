import Foundation
import GRDB

/// Field marks on SQLite: the `field_mark` table and the partial indexes each mark makes.
extension SQLiteAccess {
    func fieldMarks(recordType: String) throws -> [String: FieldIndexOptions] {
        var marks: [String: FieldIndexOptions] = [:]
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT key, options FROM field_mark WHERE type = ?"), arguments: [recordType])
        while let row = try rows.next() {
            try StoredColumns.skippingDamage {
                try StoredColumns.decoding("field_mark", key: "\(recordType).\(StoredColumns.label(row, 0))") {
                    let key = try StoredColumns.text(row, 0, "key")
                    guard Identifier.isValid(key) else { throw StoredColumns.Mismatch(problem: "key is not a field key") }
                    marks[key] = FieldIndexOptions(rawValue: Int(try StoredColumns.integer(row, 1, "options")))
                }
            }
        }
        return marks
    }

    /// The type's searchable keys, in order: what its FTS5 rows index.
    func searchableKeys(of recordType: String) throws -> [String] {
        if let known = memo.searchableKeys[recordType] { return known }
        let statement = try db.cachedStatement(sql: "SELECT key FROM field_mark WHERE type = ? AND options & ? ORDER BY key")
        // A key someone wrote straight into the table that is no field key matches no field; leave it out.
        let keys = try String.fetchAll(statement, arguments: [recordType, FieldIndexOptions.searchable.rawValue]).filter(Identifier.isValid)
        memo.searchableKeys[recordType] = keys
        return keys
    }

    func setFieldMark(_ options: FieldIndexOptions, key: String, recordType: String) throws {
        try Identifier.checkRecordType(recordType)
        try Identifier.checkFieldKey(key)
        let before = try fieldMarks(recordType: recordType)[key] ?? []
        if options.isEmpty {
            try db.execute(sql: "DELETE FROM field_mark WHERE type = ? AND key = ?", arguments: [recordType, key])
        } else {
            try db.execute(sql: """
                INSERT INTO field_mark (type, key, options) VALUES (?, ?, ?)
                ON CONFLICT (type, key) DO UPDATE SET options = excluded.options
                """, arguments: [recordType, key, options.rawValue])
        }
        memo.searchableKeys[recordType] = nil
        try Self.indexField(db, key: key, recordType: recordType, options: options)
        if before.contains(.searchable) != options.contains(.searchable) {
            try reindexSearchText(recordType: recordType)
        }
    }

    /// Creates or drops a field's indexes to match its marks.
    ///
    /// The indexes are partial, over the records of the field's type only:
    /// otherwise every record of every type would get an entry (a NULL) in
    /// every type's field indexes, and pay for it on each save. A query
    /// spells the type as the same literal (`QuerySQL.typeCondition`), so SQLite
    /// sees that the index applies when it prepares the statement. Names, JSON
    /// paths and the type are spliced here, never values: the key and the type
    /// passed `Identifier`, which allows only ASCII letters, digits and `_`, so
    /// none can end the quotes it sits in.
    static func indexField(_ db: GRDB.Database, key: String, recordType: String, options: FieldIndexOptions) throws {
        for index in fieldIndexes(key: key, recordType: recordType) {
            if options.contains(index.option) {
                try db.execute(sql: "CREATE INDEX IF NOT EXISTS \"\(index.name)\" \(index.definition)")
            } else {
                try db.execute(sql: "DROP INDEX IF EXISTS \"\(index.name)\"")
            }
        }
    }

    /// The indexes a field mark makes: which option asks for each, its name, and what follows `CREATE INDEX "name"`.
    static func fieldIndexes(key: String, recordType: String) -> [(option: FieldIndexOptions, name: String, definition: String)] {
        let rows = "WHERE type = '\(recordType)'"
        return [
            (.queryable, "record_q:\(recordType):\(key)", "ON record (type, \(FieldSQL.value(key)), created) \(rows)"),
            (.sortable, "record_s:\(recordType):\(key)", "ON record (type, \(FieldSQL.value(key))) \(rows)"),
        ]
    }
}
