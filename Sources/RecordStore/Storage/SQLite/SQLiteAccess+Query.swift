import Foundation
import GRDB

/// Queries, field marks with their indexes, full-text search and subscriptions, on SQLite.
extension SQLiteAccess {
    // MARK: Queries

    /// Runs `body` once as is; if a row's fields were not JSON (someone wrote them by hand), once more skipping such rows.
    private func retryingOnMalformedJSON<T>(_ body: (_ validJSONOnly: Bool) throws -> T) throws -> T {
        do {
            return try body(false)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR && error.message?.contains("malformed JSON") == true {
            return try body(true)
        }
    }

    func records(matching request: QueryRequest) throws -> [(record: Record?, position: QueryPosition)] {
        let searchable = try searchableKeys(of: request.query.recordType)
        return try retryingOnMalformedJSON { validJSONOnly in
            try records(matching: request, searchableKeys: searchable, validJSONOnly: validJSONOnly)
        }
    }

    private func records(matching request: QueryRequest, searchableKeys searchable: [String], validJSONOnly: Bool) throws -> [(record: Record?, position: QueryPosition)] {
        let (sql, arguments) = QuerySQL.select(request, searchableKeys: searchable, validJSONOnly: validJSONOnly)
        let sortCount = request.query.sortDescriptors.count
        // The text repeats for each page of one query (values are bound), so the statement is cached.
        // Rows are decoded from the cursor as they come, by position (see `QuerySQL.select`), not copied first.
        let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
        var found: [(record: Record?, position: QueryPosition)] = []
        while let row = try rows.next() {
            // `id` is the rowid, an integer, unless someone rewrote the table's definition behind SQLite's back.
            let order = Int64.fromDatabaseValue(row[QuerySQL.Column.id]) ?? 0
            let values = (0..<sortCount).map { QuerySQL.sortable(row[QuerySQL.Column.firstSort + $0] as DatabaseValue) }
            let record = try StoredColumns.skippingDamage {
                try StoredColumns.decoding("record", key: "rowid \(order)") {
                    let id = RecordID(recordName: try StoredColumns.text(row, QuerySQL.Column.name, "name"),
                                      zoneID: ZoneID(zoneName: try StoredColumns.text(row, QuerySQL.Column.zone, "zone")))
                    return try Self.decodeRecord(row, from: QuerySQL.Column.record, id: id, assets: assets, keys: request.desiredKeys)
                }
            }
            found.append((record, QueryPosition(sortValues: values, order: order)))
        }
        return found
    }

    func countRecords(matching query: Query, zone: String?) throws -> Int {
        let searchable = try searchableKeys(of: query.recordType)
        return try retryingOnMalformedJSON { validJSONOnly in
            let (sql, arguments) = QuerySQL.count(query, zone: zone, searchableKeys: searchable, validJSONOnly: validJSONOnly)
            return try Int.fetchOne(db.cachedStatement(sql: sql), arguments: arguments) ?? 0
        }
    }

    /// The query plan SQLite picks for a query, one line per step (for tests and diagnostics).
    func queryPlan(_ request: QueryRequest) throws -> [String] {
        let (sql, arguments) = QuerySQL.select(request, searchableKeys: try searchableKeys(of: request.query.recordType))
        return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] }
    }

    // MARK: Field marks

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

    private func searchableKeys(of recordType: String) throws -> [String] {
        let statement = try db.cachedStatement(sql: "SELECT key FROM field_mark WHERE type = ? AND options & ? ORDER BY key")
        // A key someone wrote straight into the table that is no field key matches no field; leave it out.
        return try String.fetchAll(statement, arguments: [recordType, FieldIndexOptions.searchable.rawValue]).filter(Identifier.isValid)
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
        try Self.indexField(db, key: key, recordType: recordType, options: options)
        if before.contains(.searchable) != options.contains(.searchable) {
            try reindexSearchText(recordType: recordType)
        }
    }

    /// Creates or drops a field's indexes to match its marks.
    ///
    /// The indexes are partial, over the records of the field's type only:
    /// otherwise every record of every type would get an entry (a NULL) in
    /// every type's field indexes, and pay for it on each save. Queries bind
    /// the type as a parameter, and SQLite still picks a partial index then,
    /// because it plans with the bound value. Names, JSON paths and the type
    /// are spliced here, never values: the key and the type passed `Identifier`,
    /// which allows only letters, digits and `_`.
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

    // MARK: Full-text search

    /// Rebuilds the search text of every record of a type, after its searchable fields changed.
    private func reindexSearchText(recordType: String) throws {
        try db.execute(sql: "DELETE FROM record_search WHERE rowid IN (SELECT id FROM record WHERE type = ?)", arguments: [recordType])
        let keys = try searchableKeys(of: recordType)
        guard !keys.isEmpty else { return }
        let rows = try Row.fetchCursor(db, sql: "SELECT id, zone, fields FROM record WHERE type = ?", arguments: [recordType])
        while let row = try rows.next() {
            let rowID: Int64 = row[0]
            try StoredColumns.skippingDamage {
                try StoredColumns.decoding("record", key: "rowid \(rowID)") {
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
    func indexSearchText(of record: Record, rowID: Int64, isNew: Bool) throws {
        let keys = try searchableKeys(of: record.recordType)
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

    // MARK: Subscriptions

    func subscriptionBodies(owner: String) throws -> [(id: String, body: String)] {
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT id, body FROM subscription WHERE owner = ? ORDER BY id"), arguments: [owner])
        var bodies: [(id: String, body: String)] = []
        while let row = try rows.next() {
            try StoredColumns.skippingDamage {
                try StoredColumns.decoding("subscription", key: "\(owner)/\(StoredColumns.label(row, 0))") {
                    bodies.append((try StoredColumns.text(row, 0, "id"), try StoredColumns.text(row, 1, "body")))
                }
            }
        }
        return bodies
    }

    func saveSubscription(id: String, owner: String, body: String, parent: Subscription.Parent?) throws {
        try db.execute(sql: """
            INSERT INTO subscription (owner, id, body, parent_zone, parent_name, parent_created) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (owner, id) DO UPDATE SET body = excluded.body, parent_zone = excluded.parent_zone,
                parent_name = excluded.parent_name, parent_created = excluded.parent_created
            """, arguments: [owner, id, body, parent?.recordID.zoneID.zoneName, parent?.recordID.recordName,
                              parent?.creationDate?.timeIntervalSince1970])
    }

    func deleteSubscription(id: String, owner: String) throws -> Bool {
        try db.execute(sql: "DELETE FROM subscription WHERE owner = ? AND id = ?", arguments: [owner, id])
        return db.changesCount > 0
    }
}
