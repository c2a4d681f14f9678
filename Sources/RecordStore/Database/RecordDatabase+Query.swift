import Foundation

extension RecordDatabase {
    /// The most records one query page returns.
    public static let maximumResultsLimit = 10_000

    /// Runs a query, as CloudKit's `CKQueryOperation`: one page of matching records, and a cursor for the next.
    ///
    /// With `cursor`, the page continues right after the cursor's last record,
    /// and `query` must be the cursor's query. `zone` limits the query to one
    /// zone; without it, every zone is searched. With `desiredKeys`, records
    /// are partial: only those fields are loaded.
    public func records(
        matching query: Query,
        inZone zone: ZoneID? = nil,
        desiredKeys: [String]? = nil,
        resultsLimit: Int = 100,
        cursor: QueryCursor? = nil
    ) throws -> QueryResult {
        try Identifier.checkRecordType(query.recordType)
        guard (1...Self.maximumResultsLimit).contains(resultsLimit) else {
            throw StoreError(.invalidArguments, "resultsLimit is \(resultsLimit); ask for 1 to \(Self.maximumResultsLimit) records per page.")
        }
        if let cursor, cursor.query != query || cursor.zone != zone {
            throw StoreError(.invalidArguments, "The cursor belongs to another query; pass the query and zone it came from.")
        }
        if let zone { try checkZone(zone) }
        let request = QueryRequest(query: query, zone: zone?.zoneName, desiredKeys: desiredKeys.map(Set.init),
                                   after: cursor?.position, limit: resultsLimit + 1)
        var rows = try storage.read { try $0.records(matching: request) }
        let more = rows.count > resultsLimit
        if more { rows.removeLast() }
        let next = more ? rows.last.map { QueryCursor(query: query, zone: zone, position: $0.position) } : nil
        // A damaged row was skipped (and logged); its position still moved the cursor, so a page may hold fewer records.
        return QueryResult(records: rows.compactMap(\.record), cursor: next)
    }

    /// How many records a query matches, without loading them; `zone` limits it to one zone.
    ///
    /// CloudKit has no such call; it is here for counts such as an outbox's
    /// length, which would otherwise load every record to count them.
    public func countRecords(matching query: Query, inZone zone: ZoneID? = nil) throws -> Int {
        try Identifier.checkRecordType(query.recordType)
        if let zone { try checkZone(zone) }
        return try storage.read { try $0.countRecords(matching: query, zone: zone?.zoneName) }
    }

    /// Continues a query from `cursor`, with the cursor's own query and zone.
    public func records(continuing cursor: QueryCursor, desiredKeys: [String]? = nil, resultsLimit: Int = 100) throws -> QueryResult {
        try records(matching: cursor.query, inZone: cursor.zone, desiredKeys: desiredKeys, resultsLimit: resultsLimit, cursor: cursor)
    }

    /// Marks a field of a record type as queryable, sortable and/or searchable; empty options remove the marks.
    ///
    /// Queryable and sortable fields get indexes, searchable string fields go
    /// into full-text search. Records saved before the mark are indexed now.
    public func setIndexes(_ options: FieldIndexOptions, forField key: String, ofType recordType: String) throws {
        if Self.systemFieldKeys.contains(key) {
            throw StoreError(.invalidArguments, "'\(key)' is a system field; system fields are indexed already.")
        }
        try storage.write { try $0.setFieldMark(options, key: key, recordType: recordType) }
    }

    /// The index marks of each marked field of a record type.
    public func indexes(ofType recordType: String) throws -> [String: FieldIndexOptions] {
        try storage.read { try $0.fieldMarks(recordType: recordType) }
    }
}
