import Foundation

/// A condition on records, in the NSPredicate format that CloudKit's `CKQuery` accepts.
///
/// A predicate is parsed once, when it is made, so a malformed format fails
/// early with `invalidArguments` naming the character where it went wrong.
/// It keeps its format and arguments, which is how subscriptions store it.
public struct QueryPredicate: Hashable, Sendable, CustomStringConvertible {
    /// The format it was parsed from.
    public let format: String
    /// The values that filled its `%@` and `%K` placeholders, in order.
    public let arguments: [FieldValue]
    /// The parsed condition.
    let root: PredicateNode

    /// Parses `format`, filling each `%@` (a value) or `%K` (a field key) from `arguments` in order.
    public init(format: String, _ arguments: any PredicateArgument...) throws {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses `format` with an array of arguments.
    public init(format: String, argumentArray: [any PredicateArgument]) throws {
        let values = argumentArray.map(\.predicateValue)
        self.format = format
        self.arguments = values
        var parser = PredicateParser(format: format, arguments: values)
        self.root = try parser.parse()
    }

    init(format: String, arguments: [FieldValue], root: PredicateNode) {
        self.format = format
        self.arguments = arguments
        self.root = root
    }

    /// The predicate every record matches.
    public static let all = QueryPredicate(format: "TRUEPREDICATE", arguments: [], root: .constant(true))
    /// The predicate no record matches.
    public static let none = QueryPredicate(format: "FALSEPREDICATE", arguments: [], root: .constant(false))

    /// The format, as written.
    public var description: String { format }

    /// Two predicates are equal when they parse to the same condition with the same values.
    public static func == (a: QueryPredicate, b: QueryPredicate) -> Bool { a.root == b.root }
    /// Hashes the parsed condition.
    public func hash(into hasher: inout Hasher) { hasher.combine(root) }
}

/// What a predicate's left side names: a field, or one of the system fields.
enum PredicateKey: Hashable, Sendable {
    case field(String)
    case creationDate
    case modificationDate
    case creatorUserRecordID
    case recordID

    /// Maps a key path as written in a format to a key; system field names win.
    init?(name: String) {
        switch name {
        case "creationDate": self = .creationDate
        case "modificationDate": self = .modificationDate
        case "creatorUserRecordID": self = .creatorUserRecordID
        case "recordID": self = .recordID
        default:
            guard Identifier.isValid(name), !RecordDatabase.systemFieldKeys.contains(name) else { return nil }
            self = .field(name)
        }
    }

    /// Whether the key holds a date, so only dates and numbers compare with it.
    var isDate: Bool { self == .creationDate || self == .modificationDate }
    /// Whether the key holds a record ID, so only `==`, `!=`, `IN` and `BEGINSWITH` apply.
    var isIdentity: Bool { self == .recordID || self == .creatorUserRecordID }
}

/// An ordering comparison; `!=` is parsed as `NOT ==`.
enum ComparisonOperator: String, Hashable, Sendable {
    case equal = "=="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

/// A value a predicate compares against, reduced to what SQL compares.
enum PredicateValue: Hashable, Sendable {
    case integer(Int64)
    case real(Double)
    case text(String)
    /// A record ID or reference: equal to a reference field (or recordID) naming it, in its zone.
    case record(RecordID)
}

/// The parsed form of a predicate.
indirect enum PredicateNode: Hashable, Sendable {
    case constant(Bool)
    case not(PredicateNode)
    case and([PredicateNode])
    case or([PredicateNode])
    /// `key op value`.
    case compare(PredicateKey, ComparisonOperator, PredicateValue)
    /// `key IN {values}`.
    case among(PredicateKey, [PredicateValue])
    /// `key BEGINSWITH prefix`, case-sensitive.
    case beginsWith(PredicateKey, String)
    /// `key CONTAINS value`, for a list field.
    case listContains(String, PredicateValue)
    /// `self CONTAINS 'words'`: every token appears in the record's searchable text.
    case tokens([String])
    /// `distanceToLocation:fromLocation:(key, location) op meters`.
    case distance(String, Location, ComparisonOperator, Double)
}
