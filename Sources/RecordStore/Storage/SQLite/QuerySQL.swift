import Foundation
import GRDB

/// Compiles a query to one parameterized SELECT over the `record` table.
///
/// Values are always bound as parameters. Field keys, which `Identifier`
/// restricts to ASCII letters, digits and `_`, appear inside JSON paths in the
/// SQL text, because an expression index is only used when the query spells the
/// same expression (`FieldSQL.value`). The record type, an identifier too, is
/// spelled as a literal for the same reason (`typeCondition`); nothing else is.
///
/// A negation is pushed down to the comparisons (`NOT (a AND b)` becomes
/// `NOT a OR NOT b`), and a negated comparison is written
/// `IFNULL(c, 0) = 0`, so a missing field (NULL) reads as false before it is
/// negated, as in the in-memory evaluator; comparisons that are not negated
/// stay plain, so indexes apply.
struct QuerySQL {
    /// The type's searchable fields; token search uses FTS5 when there are some, else scans.
    let searchableKeys: [String]
    /// Skip rows whose fields are not valid JSON before any field is compared: see `matching`.
    let validJSONOnly: Bool
    private(set) var arguments: [DatabaseValue] = []

    init(searchableKeys: [String], validJSONOnly: Bool = false) {
        self.searchableKeys = searchableKeys
        self.validJSONOnly = validJSONOnly
    }

    /// Where `select` puts each column: the row ID, zone and name, then `SQLiteAccess.recordColumns`, then the sort values.
    enum Column {
        static let id = 0, zone = 1, name = 2, record = 3
        static let firstSort = record + SQLiteAccess.recordColumnNames.count
    }

    /// The SELECT for `request`, whose rows have the columns of `Column`.
    static func select(_ request: QueryRequest, searchableKeys: [String], validJSONOnly: Bool = false) -> (sql: String, arguments: StatementArguments) {
        var builder = QuerySQL(searchableKeys: searchableKeys, validJSONOnly: validJSONOnly)
        let sorts = request.query.order
        var columns = "id, zone, name, " + SQLiteAccess.recordColumns
        for (i, sort) in sorts.enumerated() { columns += ", " + builder.sortExpression(sort.key) + " AS s\(i)" }
        var sql = "SELECT \(columns) FROM record WHERE " + builder.matching(request.query, zone: request.zone)
        if let after = request.after { sql += " AND " + builder.after(after, sorts: sorts) }
        let idAscending = sorts.last?.ascending ?? true
        let order = sorts.map { builder.sortExpression($0.key) + ($0.ascending ? " ASC" : " DESC") } + ["id" + (idAscending ? " ASC" : " DESC")]
        sql += " ORDER BY " + order.joined(separator: ", ") + " LIMIT " + builder.bind(Int64(request.limit))
        return (sql, StatementArguments(builder.arguments))
    }

    /// The COUNT of the records a query matches, in one zone or all.
    static func count(_ query: Query, zone: String?, searchableKeys: [String], validJSONOnly: Bool = false) -> (sql: String, arguments: StatementArguments) {
        var builder = QuerySQL(searchableKeys: searchableKeys, validJSONOnly: validJSONOnly)
        let sql = "SELECT count(*) FROM record WHERE " + builder.matching(query, zone: zone)
        return (sql, StatementArguments(builder.arguments))
    }

    /// The WHERE condition of a query: its type, the zone, and its predicate.
    ///
    /// `json_extract` fails the whole statement on a row whose fields are not
    /// JSON, which only someone writing the file by hand can store. With
    /// `validJSONOnly`, `json_valid` comes first, and SQLite tests the terms an
    /// index does not answer in the order written, so such a row is passed over
    /// before any field of it is read. It costs a parse per row, so it is the
    /// retry after that failure, not the first try (`SQLiteAccess.retryingOnMalformedJSON`).
    private mutating func matching(_ query: Query, zone: String?) -> String {
        var condition = typeCondition(query.recordType)
        if validJSONOnly { condition += " AND json_valid(fields)" }
        if let zone { condition += " AND zone = " + bind(zone) }
        let predicate = compile(query.predicate.root, negated: false)
        if predicate != "1" { condition += " AND " + predicate }
        return condition
    }

    /// The record type is spelled as a literal rather than bound. Bound, SQLite plans
    /// with its value to pick a partial field index (`WHERE type = 'T'`), and so
    /// prepares the statement again every time the parameter is bound, cached or
    /// not. The literal is safe because types are identifiers (ASCII letters,
    /// digits, `_`: no quote can end it), checked here once more; anything else is bound.
    private mutating func typeCondition(_ recordType: String) -> String {
        Identifier.isValid(recordType) ? "type = '\(recordType)'" : "type = " + bind(recordType)
    }

    private mutating func bind(_ value: some DatabaseValueConvertible) -> String {
        arguments.append(value.databaseValue)
        return "?"
    }

    // MARK: Predicates

    mutating func compile(_ node: PredicateNode, negated: Bool) -> String {
        node.sql(negated: negated, literals: ("1", "0"), negating: { "IFNULL(\($0), 0) = 0" }, atom: { atom($0) })
    }

    private mutating func atom(_ node: PredicateNode) -> String {
        switch node {
        case .compare(let key, let op, let value):
            return compare(key, op, value)
        case .among(let key, let values):
            return among(key, values)
        case .beginsWith(let key, let prefix):
            let e = FieldSQL.expression(key)
            var sql = "(\(e) >= \(bind(prefix))"
            if let upper = Self.successor(of: prefix) { sql += " AND \(e) < \(bind(upper))" }
            if case .field(let name) = key, prefix.isEmpty || prefix.hasPrefix("[") { sql += " AND " + FieldSQL.notArray(name) }
            return sql + ")"
        case .listContains(let key, let value):
            var sql = "(\(FieldSQL.tag(key)) = 'L' AND EXISTS (SELECT 1 FROM json_each(fields, '$.\(key).v') AS e"
            sql += " WHERE e.type IN ('text', 'integer', 'real') AND e.value = "
            switch value {
            case .integer(let i): sql += bind(i) + ")"
            case .real(let d): sql += bind(d) + ")"
            case .text(let s): sql += bind(s) + ")"
            case .record(let id): sql += bind(id.recordName) + ") AND zone = " + bind(id.zoneID.zoneName)
            }
            return sql + ")"
        case .tokens(let words):
            guard !words.isEmpty else { return "0" }
            if searchableKeys.isEmpty {
                return "fatchat_tokens_match(fields, \(bind(words.joined(separator: " "))))"
            }
            let match = words.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: " ")
            return "id IN (SELECT rowid FROM record_search WHERE record_search MATCH \(bind(match)))"
        case .distance(let key, let location, let op, let meters):
            return "(\(FieldSQL.tag(key)) = 'l' AND \(distance(key, location)) \(op.rawValue) \(bind(meters)))"
        default:
            return compile(node, negated: false)
        }
    }

    private mutating func compare(_ key: PredicateKey, _ op: ComparisonOperator, _ value: PredicateValue) -> String {
        let e = FieldSQL.expression(key)
        let sqlOp = op == .equal ? "=" : op.rawValue
        var parts: [String]
        var mayMatchArray = false
        switch value {
        case .record(let id):
            parts = ["\(e) = \(bind(id.recordName))"]
            if key != .creatorUserRecordID { parts.append("zone = " + bind(id.zoneID.zoneName)) }
            mayMatchArray = id.recordName.hasPrefix("[")
        case .text(let s):
            parts = ["\(e) \(sqlOp) \(bind(s))"]
            if op != .equal { parts.append("\(e) >= ''") }
            mayMatchArray = op != .equal || s.hasPrefix("[")
        case .integer(let i):
            parts = ["\(e) \(sqlOp) \(bind(i))"]
            if op == .greater || op == .greaterOrEqual { parts.append("\(e) < ''") }
        case .real(let d):
            parts = ["\(e) \(sqlOp) \(bind(d))"]
            if op == .greater || op == .greaterOrEqual { parts.append("\(e) < ''") }
        }
        if case .field(let name) = key, mayMatchArray { parts.append(FieldSQL.notArray(name)) }
        return parts.count == 1 ? parts[0] : "(" + parts.joined(separator: " AND ") + ")"
    }

    private mutating func among(_ key: PredicateKey, _ values: [PredicateValue]) -> String {
        let e = FieldSQL.expression(key)
        var scalars: [String] = []
        var byZone: [(zone: String, names: [String])] = []
        var mayMatchArray = false
        for value in values {
            switch value {
            case .integer(let i): scalars.append(bind(i))
            case .real(let d): scalars.append(bind(d))
            case .text(let s):
                scalars.append(bind(s))
                mayMatchArray = mayMatchArray || s.hasPrefix("[")
            case .record(let id):
                mayMatchArray = mayMatchArray || id.recordName.hasPrefix("[")
                if key == .creatorUserRecordID {
                    scalars.append(bind(id.recordName))
                } else if let i = byZone.firstIndex(where: { $0.zone == id.zoneID.zoneName }) {
                    byZone[i].names.append(id.recordName)
                } else {
                    byZone.append((id.zoneID.zoneName, [id.recordName]))
                }
            }
        }
        var alternatives: [String] = []
        if !scalars.isEmpty { alternatives.append("\(e) IN (\(scalars.joined(separator: ", ")))") }
        for group in byZone {
            let names = group.names.map { bind($0) }.joined(separator: ", ")
            alternatives.append("(\(e) IN (\(names)) AND zone = \(bind(group.zone)))")
        }
        guard !alternatives.isEmpty else { return "0" }
        var sql = alternatives.count == 1 ? alternatives[0] : "(" + alternatives.joined(separator: " OR ") + ")"
        if case .field(let name) = key, mayMatchArray { sql = "(\(FieldSQL.notArray(name)) AND \(sql))" }
        return sql
    }

    /// The smallest string greater than every string that starts with `prefix`, if there is one.
    static func successor(of prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var next = last.value + 1
            if next == 0xD800 { next = 0xE000 }
            if let scalar = Unicode.Scalar(next) {
                scalars.append(scalar)
                var out = String.UnicodeScalarView()
                out.append(contentsOf: scalars)
                return String(out)
            }
        }
        return nil
    }

    // MARK: Order and cursors

    private mutating func distance(_ key: String, _ location: Location) -> String {
        "fatchat_distance(json_extract(fields, '$.\(key).v[0]'), json_extract(fields, '$.\(key).v[1]'), \(bind(location.latitude)), \(bind(location.longitude)))"
    }

    mutating func sortExpression(_ key: QuerySortDescriptor.Key) -> String {
        switch key {
        case .value(let key): FieldSQL.expression(key)
        case .distance(let field, let location): "(CASE WHEN \(FieldSQL.tag(field)) = 'l' THEN \(distance(field, location)) END)"
        }
    }

    /// Rows strictly after `position` in the query's order: `(s0, s1, …, id) > (v0, v1, …, order)`.
    ///
    /// The first key also gets a plain range bound when that is exact, so an
    /// index seeks straight to the position instead of skipping rows before it.
    private mutating func after(_ position: QueryPosition, sorts: [QuerySortDescriptor]) -> String {
        let idAscending = sorts.last?.ascending ?? true
        var range = ""
        if let first = sorts.first, let v = position.sortValues.first, v != .null {
            if first.ascending {
                range = sortExpression(first.key) + " >= " + bindSortable(v) + " AND "
            } else if case .value(let key) = first.key, FieldSQL.isColumn(key) {
                range = sortExpression(first.key) + " <= " + bindSortable(v) + " AND "
            }
        }
        return "(" + range + after(position, sorts: sorts, from: 0, idAscending: idAscending) + ")"
    }

    private mutating func after(_ position: QueryPosition, sorts: [QuerySortDescriptor], from i: Int, idAscending: Bool) -> String {
        guard i < sorts.count, i < position.sortValues.count else {
            return "id " + (idAscending ? ">" : "<") + " " + bind(position.order)
        }
        let v = position.sortValues[i]
        // Each spelling of a sort expression binds its own parameters (a distance has two), so build them in text order.
        let beyond: String
        switch (sorts[i].ascending, v) {
        case (true, .null): beyond = "\(sortExpression(sorts[i].key)) IS NOT NULL"
        case (true, _): beyond = sortExpression(sorts[i].key) + " > " + bindSortable(v)
        case (false, .null): beyond = "0"
        case (false, _):
            let less = sortExpression(sorts[i].key) + " < " + bindSortable(v)
            beyond = "(\(less) OR \(sortExpression(sorts[i].key)) IS NULL)"
        }
        let e2 = sortExpression(sorts[i].key)
        let tie = "\(e2) IS \(bindSortable(v))"
        return "(\(beyond) OR (\(tie) AND \(after(position, sorts: sorts, from: i + 1, idAscending: idAscending))))"
    }

    private mutating func bindSortable(_ value: SortableValue) -> String {
        switch value {
        case .null: return bind(DatabaseValue.null)
        case .integer(let i): return bind(i)
        case .real(let d): return bind(d)
        case .text(let s): return bind(s)
        case .blob(let data): return bind(data)
        }
    }

    /// Reads a sort column back as the value a cursor keeps.
    static func sortable(_ value: DatabaseValue) -> SortableValue {
        switch value.storage {
        case .null: .null
        case .int64(let i): .integer(i)
        case .double(let d): .real(d)
        case .string(let s): .text(s)
        case .blob(let b): .blob(b)
        }
    }
}

/// The SQL spelling of keys: shared by queries and index definitions, which must match exactly.
enum FieldSQL {
    /// The comparable plain value of a field.
    static func value(_ key: String) -> String { "json_extract(fields, '$.\(key).v')" }
    /// The stored type tag of a field (`L` for a list, `l` for a location).
    static func tag(_ key: String) -> String { "json_extract(fields, '$.\(key).t')" }
    /// True unless the field's value is a JSON array (a list or a location), which no scalar comparison matches.
    static func notArray(_ key: String) -> String { "json_type(fields, '$.\(key).v') <> 'array'" }

    static func expression(_ key: PredicateKey) -> String {
        switch key {
        case .field(let name): value(name)
        case .creationDate: "created"
        case .modificationDate: "modified"
        case .creatorUserRecordID: "creator"
        case .recordID: "name"
        }
    }

    /// Whether the key is a column, never NULL.
    static func isColumn(_ key: PredicateKey) -> Bool {
        if case .field = key { false } else { true }
    }
}

extension PredicateNode {
    /// Spells the predicate in SQL with every NOT pushed down to the comparisons (`NOT (a AND b)` is `NOT a OR NOT b`).
    ///
    /// `literals` spell true and false, `negating` wraps one negated
    /// comparison so that NULL reads as false first, and `atom` spells one
    /// comparison; each engine's query compiler passes its own.
    func sql(negated: Bool, literals: (true: String, false: String), negating: (String) -> String, atom: (PredicateNode) -> String) -> String {
        switch self {
        case .constant(let b):
            return b != negated ? literals.true : literals.false
        case .not(let inner):
            return inner.sql(negated: !negated, literals: literals, negating: negating, atom: atom)
        case .and(let terms), .or(let terms):
            let isAnd: Bool = if case .and = self { true } else { false }
            guard !terms.isEmpty else { return isAnd != negated ? literals.true : literals.false }
            let parts = terms.map { $0.sql(negated: negated, literals: literals, negating: negating, atom: atom) }
            return "(" + parts.joined(separator: isAnd != negated ? " AND " : " OR ") + ")"
        default:
            return negated ? negating(atom(self)) : atom(self)
        }
    }
}
