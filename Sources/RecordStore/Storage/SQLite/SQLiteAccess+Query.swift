import Foundation
import GRDB

/// Queries on SQLite: `QuerySQL`'s statements, run and decoded.
extension SQLiteAccess {
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
        let sortCount = request.query.order.count
        // The text repeats for each page of one query (values are bound), so the statement is cached.
        // Rows are decoded from the cursor as they come, by position (see `QuerySQL.select`), not copied first.
        let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
        var found: [(record: Record?, position: QueryPosition)] = []
        while let row = try rows.next() {
            // `id` is the rowid, an integer, unless someone rewrote the table's definition behind SQLite's back.
            let order = Int64.fromDatabaseValue(try StoredColumns.value(row, QuerySQL.Column.id)) ?? 0
            let values = try (0..<sortCount).map { QuerySQL.sortable(try StoredColumns.value(row, QuerySQL.Column.firstSort + $0)) }
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
        return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { try $0.decode(String.self, forColumn: "detail") }
    }
}
