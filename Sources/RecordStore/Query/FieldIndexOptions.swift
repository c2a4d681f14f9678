import Foundation

/// How a field of a record type is indexed, as marked in CloudKit Dashboard.
public struct FieldIndexOptions: OptionSet, Hashable, Sendable {
    /// The option bits.
    public let rawValue: Int
    /// Initializes from the raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Equality and range queries use an index on (type, field, creationDate).
    public static let queryable = FieldIndexOptions(rawValue: 1)
    /// Sorting uses an index on (type, field).
    public static let sortable = FieldIndexOptions(rawValue: 2)
    /// The field's text goes into full-text search for `self CONTAINS`.
    public static let searchable = FieldIndexOptions(rawValue: 4)
}
