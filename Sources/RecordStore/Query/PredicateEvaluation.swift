import Foundation

/// A value as SQLite compares it: NULL first, then numbers, then text by bytes.
///
/// The in-memory evaluator reduces fields to this so it agrees with the SQL
/// that a predicate compiles to; query cursors carry these as sort positions.
enum SortableValue: Hashable, Sendable, Codable, Comparable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    /// A blob, which only a hand-planted column holds (a `created` written as `x'00'`, say); SQLite sorts it after
    /// all text. A cursor keeps it as a blob, so that the next page's bound sorts where the row did.
    case blob(Data)

    private var rank: Int {
        switch self {
        case .null: 0
        case .integer, .real: 1
        case .text: 2
        case .blob: 3
        }
    }

    static func < (a: SortableValue, b: SortableValue) -> Bool { compare(a, b) < 0 }

    /// -1, 0 or 1, with SQLite's rules: integers and reals compare by value, text by UTF-8 bytes, blobs by bytes.
    static func compare(_ a: SortableValue, _ b: SortableValue) -> Int {
        if a.rank != b.rank { return a.rank < b.rank ? -1 : 1 }
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.integer(let x), .real(let y)): return -compareReal(y, x)
        case (.real(let x), .integer(let y)): return compareReal(x, y)
        case (.real(let x), .real(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.text(let x), .text(let y)):
            let (p, q) = (Array(x.utf8), Array(y.utf8))
            return p == q ? 0 : (p.lexicographicallyPrecedes(q) ? -1 : 1)
        case (.blob(let x), .blob(let y)):
            return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
        default: return 0
        }
    }

    private static func compareReal(_ x: Double, _ y: Int64) -> Int {
        let d = Double(y)
        if x < d { return -1 }
        if x > d { return 1 }
        guard x > -9.2e18, x < 9.2e18 else { return 0 }
        let i = Int64(x)
        return i < y ? -1 : (i == y ? 0 : 1)
    }
}

/// Evaluates a predicate against one record in memory: subscriptions use it, and tests check SQL against it.
struct PredicateEvaluation {
    /// The fields token search covers; `nil` means every string field.
    var searchableKeys: Set<String>?

    func matches(_ node: PredicateNode, _ record: Record) -> Bool {
        switch node {
        case .constant(let b): return b
        case .not(let inner): return !matches(inner, record)
        case .and(let terms): return terms.allSatisfy { matches($0, record) }
        case .or(let terms): return terms.contains { matches($0, record) }
        case .compare(let key, let op, let value): return compare(key, op, value, record)
        case .among(let key, let values): return values.contains { compare(key, .equal, $0, record) }
        case .beginsWith(let key, let prefix):
            guard case .text(let text)? = Self.value(of: key, in: record) else { return false }
            return text.utf8.starts(with: prefix.utf8)
        case .listContains(let key, let value):
            guard case .list(let items)? = record[key] else { return false }
            return items.contains { Self.equal(Self.scalar($0), value, zone: record.recordID.zoneID.zoneName, checksZone: true) }
        case .tokens(let words):
            let texts = record.fields.compactMap { key, value -> String? in
                if let searchableKeys, !searchableKeys.contains(key) { return nil }
                return value.stringValue
            }
            return TextTokens.matches(words, in: texts)
        case .distance(let key, let location, let op, let meters):
            guard case .location(let here)? = record[key] else { return false }
            return Self.holds(SortableValue.compare(.real(here.distance(to: location)), .real(meters)), op)
        }
    }

    private func compare(_ key: PredicateKey, _ op: ComparisonOperator, _ value: PredicateValue, _ record: Record) -> Bool {
        guard let field = Self.value(of: key, in: record) else { return false }
        if op == .equal {
            return Self.equal(field, value, zone: record.recordID.zoneID.zoneName, checksZone: key != .creatorUserRecordID)
        }
        let other: SortableValue
        switch value {
        case .integer(let i): other = .integer(i)
        case .real(let d): other = .real(d)
        case .text(let s): other = .text(s)
        case .record: return false
        }
        guard Self.sameClass(field, other) else { return false }
        return Self.holds(SortableValue.compare(field, other), op)
    }

    private static func holds(_ order: Int, _ op: ComparisonOperator) -> Bool {
        switch op {
        case .equal: order == 0
        case .less: order < 0
        case .lessOrEqual: order <= 0
        case .greater: order > 0
        case .greaterOrEqual: order >= 0
        }
    }

    private static func sameClass(_ a: SortableValue, _ b: SortableValue) -> Bool {
        switch (a, b) {
        case (.text, .text): true
        case (.integer, .integer), (.integer, .real), (.real, .integer), (.real, .real): true
        default: false
        }
    }

    private static func equal(_ field: SortableValue?, _ value: PredicateValue, zone: String, checksZone: Bool) -> Bool {
        guard let field else { return false }
        switch value {
        case .integer(let i): return sameClass(field, .integer(i)) && SortableValue.compare(field, .integer(i)) == 0
        case .real(let d): return sameClass(field, .real(d)) && SortableValue.compare(field, .real(d)) == 0
        case .text(let s): return field == .text(s) || (field.isText && SortableValue.compare(field, .text(s)) == 0)
        case .record(let id):
            guard SortableValue.compare(field, .text(id.recordName)) == 0, field.isText else { return false }
            return !checksZone || id.zoneID.zoneName == zone
        }
    }

    /// A scalar field as SQL sees it; `nil` for a missing field, a list or a location.
    static func scalar(_ value: FieldValue) -> SortableValue? {
        switch value {
        case .string(let s): .text(s)
        case .int64(let i): .integer(i)
        case .double(let d): .real(d)
        case .date(let d): .real(d.timeIntervalSince1970)
        case .bytes(let d): .text(d.base64EncodedString())
        case .reference(let r): .text(r.recordID.recordName)
        case .asset(let a): a.contentHash.map { .text($0) }
        case .location, .list: nil
        }
    }

    /// What a key holds in a record, for comparison and sorting.
    static func value(of key: PredicateKey, in record: Record) -> SortableValue? {
        switch key {
        case .field(let name): record[name].flatMap(scalar)
        case .creationDate: record.creationDate.map { .real($0.timeIntervalSince1970) }
        case .modificationDate: record.modificationDate.map { .real($0.timeIntervalSince1970) }
        case .creatorUserRecordID: record.creatorUserRecordID.map { .text($0.recordName) }
        case .recordID: .text(record.recordID.recordName)
        }
    }
}

extension SortableValue {
    var isText: Bool { if case .text = self { true } else { false } }
}

extension QueryPredicate {
    /// Whether `record` matches, evaluated in memory; token search covers `searchableKeys`, or every string field when `nil`.
    public func evaluate(with record: Record, searchableKeys: Set<String>? = nil) -> Bool {
        PredicateEvaluation(searchableKeys: searchableKeys).matches(root, record)
    }
}
