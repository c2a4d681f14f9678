import Foundation

/// Compiles a query to one parameterized SELECT over `fatchat.record`, for the `postgresql` engine.
///
/// Every value is bound. Field keys (identifiers: ASCII letters, digits, `_`)
/// and the record type are spelled as literals, because PostgreSQL uses an
/// expression index (`fatchat.set_field_mark`) only when the query spells the
/// same expression and the same partial-index condition; `Identifier` is
/// checked again here, and anything else is bound.
///
/// A field's plain value is `fields -> 'key' -> 'v'` (jsonb). Comparisons
/// keep SQLite's rules where they matter: a comparison of order is made only
/// between values of the same JSON type, a missing field is NULL and sorts
/// first ascending and last descending, and a negated comparison treats NULL
/// as false before negating, as the in-memory evaluator does. Strings compare
/// by the database's collation (byte order under `C`, which `initdb
/// --locale=C.UTF-8` gives).
struct PostgresQuerySQL {
    private(set) var arguments = PostgresArguments()

    /// Where `select` puts each column: the row ID, zone and name, then `PostgresAccess.recordColumns`, then the sort values.
    enum Column {
        static let id = 0, zone = 1, name = 2, record = 3
        static let firstSort = record + PostgresAccess.recordColumnCount
    }

    /// The SELECT for `request`, whose rows have the columns of `Column`.
    static func select(_ request: QueryRequest) -> (sql: String, arguments: PostgresArguments) {
        var builder = PostgresQuerySQL()
        let sorts = request.query.order
        var columns = "id, zone, name, " + PostgresAccess.recordColumns
        for sort in sorts { columns += ", to_jsonb(" + builder.sortExpression(sort.key) + ")::text" }
        var sql = "SELECT \(columns) FROM fatchat.record WHERE " + builder.matching(request.query, zone: request.zone)
        if let after = request.after { sql += " AND " + builder.after(after, sorts: sorts) }
        let idAscending = sorts.last?.ascending ?? true
        let order = sorts.map { builder.sortExpression($0.key) + Self.direction($0) } + ["id" + (idAscending ? " ASC" : " DESC")]
        sql += " ORDER BY " + order.joined(separator: ", ") + " LIMIT " + builder.arguments.bind(Int64(request.limit))
        return (sql, builder.arguments)
    }

    /// The COUNT of the records a query matches, in one zone or all.
    static func count(_ query: Query, zone: String?) -> (sql: String, arguments: PostgresArguments) {
        var builder = PostgresQuerySQL()
        let sql = "SELECT count(*) FROM fatchat.record WHERE " + builder.matching(query, zone: zone)
        return (sql, builder.arguments)
    }

    /// `ASC` or `DESC`, with NULLs where SQLite puts them; a column is never NULL, and is left plain so its index applies both ways.
    private static func direction(_ sort: QuerySortDescriptor) -> String {
        if case .value(let key) = sort.key, FieldSQL.isColumn(key) { return sort.ascending ? " ASC" : " DESC" }
        return sort.ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST"
    }

    private mutating func matching(_ query: Query, zone: String?) -> String {
        var condition = Identifier.isValid(query.recordType) ? "type = '\(query.recordType)'" : "type = " + arguments.bind(query.recordType)
        if let zone { condition += " AND zone = " + arguments.bind(zone) }
        let predicate = compile(query.predicate.root, negated: false)
        if predicate != "TRUE" { condition += " AND " + predicate }
        return condition
    }

    // MARK: Predicates

    mutating func compile(_ node: PredicateNode, negated: Bool) -> String {
        node.sql(negated: negated, literals: ("TRUE", "FALSE"), negating: { "COALESCE(\($0), FALSE) = FALSE" }, atom: { atom($0) })
    }

    /// The jsonb value of a field.
    static func field(_ key: String) -> String { "(fields -> '\(key)' -> 'v')" }

    private mutating func atom(_ node: PredicateNode) -> String {
        switch node {
        case .compare(let key, let op, let value):
            return compare(key, op, value)
        case .among(let key, let values):
            let alternatives = values.map { compare(key, .equal, $0) }
            return alternatives.isEmpty ? "FALSE" : "(" + alternatives.joined(separator: " OR ") + ")"
        case .beginsWith(let key, let prefix):
            let e = textExpression(key)
            var sql = "(\(e) >= \(arguments.bind(prefix))"
            if let upper = QuerySQL.successor(of: prefix) { sql += " AND \(e) < \(arguments.bind(upper))" }
            return sql + ")"
        case .listContains(let key, let value):
            var sql = "(fields -> '\(key)' ->> 't' = 'L' AND " + Self.field(key) + " @> jsonb_build_array(" + jsonValue(value) + ")"
            if case .record(let id) = value { sql += " AND zone = " + arguments.bind(id.zoneID.zoneName) }
            return sql + ")"
        case .tokens(let words):
            guard !words.isEmpty else { return "FALSE" }
            // Lexemes quoted for tsquery: a quote doubles, a backslash is escaped; the text itself is bound.
            let query = words.map { "'" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'" }
                .joined(separator: " & ")
            return "search @@ " + arguments.bind(query) + "::tsquery"
        case .distance(let key, let location, let op, let meters):
            return "(fields -> '\(key)' ->> 't' = 'l' AND \(distance(key, location)) \(op.rawValue) \(arguments.bind(meters)))"
        default:
            return compile(node, negated: false)
        }
    }

    /// A field's text, NULL unless it is a JSON string; a column as it is.
    private func textExpression(_ key: PredicateKey) -> String {
        switch key {
        case .field(let name): "(CASE WHEN jsonb_typeof(\(Self.field(name))) = 'string' THEN fields -> '\(name)' ->> 'v' END)"
        default: FieldSQL.expression(key)
        }
    }

    /// The value as jsonb, for comparing with a field.
    private mutating func jsonValue(_ value: PredicateValue) -> String {
        switch value {
        case .integer(let i): "to_jsonb(\(arguments.bind(i))::bigint)"
        case .real(let d): "to_jsonb(\(arguments.bind(d))::float8)"
        case .text(let s): "to_jsonb(\(arguments.bind(s))::text)"
        case .record(let id): "to_jsonb(\(arguments.bind(id.recordName))::text)"
        }
    }

    private mutating func compare(_ key: PredicateKey, _ op: ComparisonOperator, _ value: PredicateValue) -> String {
        let sqlOp = op == .equal ? "=" : op.rawValue
        switch key {
        case .field(let name):
            let e = Self.field(name)
            var sql = "\(e) \(sqlOp) \(jsonValue(value))"
            if op != .equal {
                let type = if case .integer = value { "number" } else if case .real = value { "number" } else { "string" }
                sql = "(jsonb_typeof(\(e)) = '\(type)' AND \(sql))"
            }
            if case .record(let id) = value { sql = "(\(sql) AND zone = \(arguments.bind(id.zoneID.zoneName)))" }
            return sql
        case .creationDate, .modificationDate:
            let column = FieldSQL.expression(key)
            switch value {
            case .integer(let i): return "\(column) \(sqlOp) \(arguments.bind(Double(i)))"
            case .real(let d): return "\(column) \(sqlOp) \(arguments.bind(d))"
            // SQLite orders every number before any text: a date is less than any string.
            case .text, .record: return op == .less || op == .lessOrEqual ? "TRUE" : "FALSE"
            }
        case .creatorUserRecordID, .recordID:
            let column = FieldSQL.expression(key)
            switch value {
            case .text(let s): return "\(column) \(sqlOp) \(arguments.bind(s))"
            case .record(let id):
                let sql = "\(column) \(sqlOp) \(arguments.bind(id.recordName))"
                return key == .recordID ? "(\(sql) AND zone = \(arguments.bind(id.zoneID.zoneName)))" : sql
            // Text is greater than every number in SQLite's order.
            case .integer, .real: return op == .greater || op == .greaterOrEqual ? "TRUE" : "FALSE"
            }
        }
    }

    // MARK: Order and cursors

    private mutating func distance(_ key: String, _ location: Location) -> String {
        let lat1 = "((fields -> '\(key)' -> 'v' ->> 0)::float8 * pi() / 180)"
        let lat2 = "(\(arguments.bind(location.latitude))::float8 * pi() / 180)"
        let lon1 = "((fields -> '\(key)' -> 'v' ->> 1)::float8 * pi() / 180)"
        let lon2 = "(\(arguments.bind(location.longitude))::float8 * pi() / 180)"
        let a = "(sin((\(lat2) - \(lat1)) / 2) ^ 2 + cos(\(lat1)) * cos(\(lat2)) * sin((\(lon2) - \(lon1)) / 2) ^ 2)"
        return "(2 * 6371008.8 * atan2(sqrt(\(a)), sqrt(1 - \(a))))"
    }

    mutating func sortExpression(_ key: QuerySortDescriptor.Key) -> String {
        switch key {
        case .value(let key):
            if case .field(let name) = key { return Self.field(name) }
            return FieldSQL.expression(key)
        case .distance(let field, let location):
            return "(CASE WHEN fields -> '\(field)' ->> 't' = 'l' THEN \(distance(field, location)) END)"
        }
    }

    /// Rows strictly after `position` in the query's order.
    ///
    /// When every sort key is a column sorted the same way as the ID, this is
    /// one row comparison, `(created, id) < ($1, $2)`, which an index on
    /// `(…, created, id)` seeks to directly; otherwise an OR chain of ties.
    private mutating func after(_ position: QueryPosition, sorts: [QuerySortDescriptor]) -> String {
        let idAscending = sorts.last?.ascending ?? true
        let plain = sorts.allSatisfy { sort in
            if case .value(let key) = sort.key { FieldSQL.isColumn(key) && sort.ascending == idAscending } else { false }
        }
        if plain, position.sortValues.count == sorts.count, !position.sortValues.contains(.null) {
            let left = sorts.map { sortExpression($0.key) } + ["id"]
            let right = zip(sorts, position.sortValues).map { bindSortable($1, for: $0.key) } + [arguments.bind(position.order)]
            return "((" + left.joined(separator: ", ") + ") " + (idAscending ? ">" : "<") + " (" + right.joined(separator: ", ") + "))"
        }
        return after(position, sorts: sorts, from: 0, idAscending: idAscending)
    }

    private mutating func after(_ position: QueryPosition, sorts: [QuerySortDescriptor], from i: Int, idAscending: Bool) -> String {
        guard i < sorts.count, i < position.sortValues.count else {
            return "id " + (idAscending ? ">" : "<") + " " + arguments.bind(position.order)
        }
        let v = position.sortValues[i]
        let key = sorts[i].key
        let beyond: String
        switch (sorts[i].ascending, v) {
        case (true, .null): beyond = "\(sortExpression(key)) IS NOT NULL"
        case (true, _): beyond = sortExpression(key) + " > " + bindSortable(v, for: key)
        case (false, .null): beyond = "FALSE"
        case (false, _): beyond = "(\(sortExpression(key)) < \(bindSortable(v, for: key)) OR \(sortExpression(key)) IS NULL)"
        }
        let tie = v == .null ? "\(sortExpression(key)) IS NULL" : "\(sortExpression(key)) = \(bindSortable(v, for: key))"
        return "(\(beyond) OR (\(tie) AND \(after(position, sorts: sorts, from: i + 1, idAscending: idAscending))))"
    }

    /// A cursor's value bound with the type of the sort expression it is compared with.
    private mutating func bindSortable(_ value: SortableValue, for key: QuerySortDescriptor.Key) -> String {
        switch key {
        case .distance:
            switch value {
            case .integer(let i): return arguments.bind(Double(i)) + "::float8"
            case .real(let d): return arguments.bind(d) + "::float8"
            case .text, .null, .blob: return "NULL::float8"
            }
        case .value(let key):
            switch key {
            case .creationDate, .modificationDate:
                switch value {
                case .integer(let i): return arguments.bind(Double(i)) + "::float8"
                case .real(let d): return arguments.bind(d) + "::float8"
                case .text, .null, .blob: return "NULL::float8"
                }
            case .creatorUserRecordID, .recordID:
                if case .text(let s) = value { return arguments.bind(s) + "::text" }
                return "NULL::text"
            case .field:
                switch value {
                case .integer(let i): return "to_jsonb(\(arguments.bind(i))::bigint)"
                case .real(let d): return "to_jsonb(\(arguments.bind(d))::float8)"
                // A list or location sorts by its JSON text; anything else that reads as text is a string.
                case .text(let s): return s.hasPrefix("[") || s.hasPrefix("{") ? "\(arguments.bind(s))::jsonb" : "to_jsonb(\(arguments.bind(s))::text)"
                // The server's columns are typed and give no blob; only a cursor made elsewhere could hold one.
                case .null, .blob: return "NULL::jsonb"
                }
            }
        }
    }

    /// Reads a sort column back (it is selected as `to_jsonb(…)::text`) as the value a cursor keeps.
    static func sortable(_ json: String?) -> SortableValue {
        guard let json, json != "null" else { return .null }
        if json.hasPrefix("\""), let text = try? JSONDecoder().decode(String.self, from: Data(json.utf8)) { return .text(text) }
        if let integer = Int64(json) { return .integer(integer) }
        if let real = Double(json) { return .real(real) }
        return .text(json)
    }
}
