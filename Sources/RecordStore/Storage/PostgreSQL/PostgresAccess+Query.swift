import Foundation
import PostgresNIO

/// Queries, field marks and search text on PostgreSQL.
extension PostgresAccess {
    func records(matching request: QueryRequest) throws -> [(record: Record?, position: QueryPosition)] {
        let (sql, arguments) = PostgresQuerySQL.select(request)
        let sortCount = request.query.order.count
        return try link.rows(sql, arguments.binds).map { row in
            let columns = PostgresColumns(row)
            let order = try columns.integer(PostgresQuerySQL.Column.id, "id")
            let values = try (0..<sortCount).map { PostgresQuerySQL.sortable(try columns.optionalText(PostgresQuerySQL.Column.firstSort + $0, "sort value")) }
            let record = try StoredColumns.skippingDamage {
                try StoredColumns.decoding("record", key: "id \(order)") {
                    let id = RecordID(recordName: try columns.text(PostgresQuerySQL.Column.name, "name"),
                                      zoneID: ZoneID(zoneName: try columns.text(PostgresQuerySQL.Column.zone, "zone")))
                    return try decodeRecord(columns, from: PostgresQuerySQL.Column.record, id: id, keys: request.desiredKeys)
                }
            }
            return (record, QueryPosition(sortValues: values, order: order))
        }
    }

    func countRecords(matching query: Query, zone: String?) throws -> Int {
        let (sql, arguments) = PostgresQuerySQL.count(query, zone: zone)
        guard let row = try link.rows(sql, arguments.binds).first else { return 0 }
        return Int(try PostgresColumns(row).integer(0, "count"))
    }

    /// The plan the server picks for a query, one line per step (for tests and diagnostics).
    func queryPlan(_ request: QueryRequest) throws -> [String] {
        let (sql, arguments) = PostgresQuerySQL.select(request)
        return try link.rows("EXPLAIN " + sql, arguments.binds).map { try PostgresColumns($0).text(0, "plan") }
    }

    func fieldMarks(recordType: String) throws -> [String: FieldIndexOptions] {
        try Self.fieldMarks(link.preparedRows(FieldMarks.self, FieldMarks.binds([recordType])))[recordType] ?? [:]
    }

    /// The field marks of some record types, kept prepared: queries read them to know which
    /// fields are searchable. A commit reads them with its look-up (`lookUp`).
    enum FieldMarks: PreparedSQL {
        static let name = "fatchat_field_marks"
        static let sql = "SELECT type, key, options FROM fatchat.field_mark WHERE type = ANY($1::text[])"

        static func binds(_ types: [String]) -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(types)
            return binds
        }
    }

    /// Field marks by type and key, from rows holding (type, key, options) from column `first` on;
    /// a key that is no field key is left out.
    static func fieldMarks(_ rows: [PostgresRow], from first: Int = 0) throws -> [String: [String: FieldIndexOptions]] {
        var marks: [String: [String: FieldIndexOptions]] = [:]
        for row in rows {
            let columns = PostgresColumns(row)
            let key = try columns.text(first + 1, "key")
            guard Identifier.isValid(key) else { continue }
            marks[try columns.text(first, "type"), default: [:]][key] = FieldIndexOptions(rawValue: Int(try columns.integer(first + 2, "options")))
        }
        return marks
    }

    /// The type's searchable keys, in order: what its search text is made of.
    func searchableKeys(of recordType: String) throws -> [String] {
        if let known = memo.searchableKeys[recordType] { return known }
        let keys = Self.searchableKeys(try fieldMarks(recordType: recordType))
        rememberSearchableKeys(keys, of: recordType)
        return keys
    }

    /// Keeps a type's searchable keys, as just read, for this transaction and for later guesses.
    func rememberSearchableKeys(_ keys: [String]?, of recordType: String) {
        memo.searchableKeys[recordType] = keys
        lasting.searchableKeys.withLock { $0[recordType] = keys }
    }

    /// The searchable keys among one type's marks, in order.
    static func searchableKeys(_ marks: [String: FieldIndexOptions]) -> [String] {
        marks.filter { $0.value.contains(.searchable) }.keys.sorted()
    }

    func setFieldMark(_ options: FieldIndexOptions, key: String, recordType: String) throws {
        try Identifier.checkRecordType(recordType)
        try Identifier.checkFieldKey(key)
        let before = try fieldMarks(recordType: recordType)[key] ?? []
        var arguments = PostgresArguments()
        try link.execute("SELECT fatchat.set_field_mark(\(arguments.bind(recordType)), \(arguments.bind(key)), \(arguments.bind(Int64(options.rawValue)))::integer)",
                         arguments.binds)
        rememberSearchableKeys(nil, of: recordType)
        if before.contains(.searchable) != options.contains(.searchable) {
            try reindexSearchText(recordType: recordType)
        }
    }

    /// Rebuilds the search text of every record of a type after its searchable fields changed, through the checked function.
    func reindexSearchText(recordType: String) throws {
        let keys = try searchableKeys(of: recordType)
        var arguments = PostgresArguments()
        let rows = try link.rows("SELECT id, zone, fields::text FROM fatchat.record WHERE type = \(arguments.bind(recordType))", arguments.binds)
        for row in rows {
            let columns = PostgresColumns(row)
            let rowID = try columns.integer(0, "id")
            var tokens: [String]?
            if !keys.isEmpty {
                guard let fields = try? FieldCoding.decode(try columns.fieldsText(2, "fields"), zone: ZoneID(zoneName: try columns.text(1, "zone")),
                                                           assetsDirectory: assets, keys: Set(keys)) else { continue }
                tokens = keys.compactMap { fields[$0]?.stringValue }.flatMap(TextTokens.tokens(of:))
            }
            var set = PostgresArguments()
            try link.execute("SELECT fatchat.set_search(\(set.bind(rowID)), \(set.bind(tokens))::text[])", set.binds)
        }
    }
}
