import Foundation

/// What to look for, as CloudKit's `CKQuery`: a record type, a predicate and an order.
public struct Query: Hashable, Sendable {
    /// The type of the records to find.
    public var recordType: String
    /// The condition records must match.
    public var predicate: QueryPredicate
    /// Applied in order; ties are broken by the order records were first saved.
    public var sortDescriptors: [QuerySortDescriptor]

    /// A query for records of `recordType` matching `predicate`, sorted by `sortDescriptors`.
    /// The order the records come in: `sortDescriptors`, or oldest first when there are none, then the
    /// order they were saved in. Both engines keep an index on (type, created), so a page of a type with
    /// millions of records costs the same however deep it is; in save order alone, SQLite sorted every
    /// record of the type again for each page.
    var order: [QuerySortDescriptor] { sortDescriptors.isEmpty ? [.oldestFirst] : sortDescriptors }

    public init(recordType: String, predicate: QueryPredicate = .all, sortDescriptors: [QuerySortDescriptor] = []) {
        self.recordType = recordType
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }
}

/// One key of a query's order: a field, a system field, or the distance from a location.
public struct QuerySortDescriptor: Hashable, Sendable {
    enum Key: Hashable, Sendable {
        case value(PredicateKey)
        case distance(field: String, from: Location)
    }

    let key: Key
    /// Smallest first when true; NULLs (missing fields) come first ascending and last descending.
    public let ascending: Bool

    /// Sorts by a field key or a system field (`creationDate`, `modificationDate`, `recordID`, `creatorUserRecordID`).
    ///
    /// Values order as SQLite orders them: missing first, then numbers (and
    /// dates), then text by bytes; a list or location sorts by its stored JSON text.
    public init(key: String, ascending: Bool = true) throws {
        guard let parsed = PredicateKey(name: key) else {
            throw StoreError(.invalidArguments, "Cannot sort by '\(key)': use a field key (a letter followed by letters, digits or '_') or a system field.")
        }
        self.key = .value(parsed)
        self.ascending = ascending
    }

    /// Sorts by the distance between the location in `key` and `location`; records without one come first ascending.
    public init(distanceOf key: String, from location: Location, ascending: Bool = true) throws {
        guard Identifier.isValid(key) else {
            throw StoreError(.invalidArguments, "Cannot sort by the distance of '\(key)': it is not a valid field key.")
        }
        self.key = .distance(field: key, from: location)
        self.ascending = ascending
    }

    /// Newest first by creation date, the order a chat shows history in.
    public static let newestFirst = QuerySortDescriptor(key: .value(.creationDate), ascending: false)
    /// Oldest first: the order of a query that names none.
    public static let oldestFirst = QuerySortDescriptor(key: .value(.creationDate), ascending: true)

    init(key: Key, ascending: Bool) {
        self.key = key
        self.ascending = ascending
    }
}

/// Where a query stopped: pass it back to get the next page.
///
/// It holds the sort values of the last record returned plus its row order,
/// so the next page starts right after it, however deep (keyset paging).
public struct QueryCursor: Hashable, Sendable {
    let query: Query
    let zone: ZoneID?
    let position: QueryPosition

    /// The query this cursor continues.
    public var continuedQuery: Query { query }
}

/// The sort values and row order of one result; the storage makes them and reads them back.
struct QueryPosition: Hashable, Sendable, Codable {
    var sortValues: [SortableValue]
    var order: Int64
}

/// One page of a query's results.
public struct QueryResult: Sendable {
    /// The matching records, in order; partial if `desiredKeys` was given.
    public var records: [Record]
    /// Where the next page starts, or `nil` when this was the last.
    public var cursor: QueryCursor?
}

/// What the storage needs to run a query.
struct QueryRequest: Sendable {
    var query: Query
    var zone: String?
    var desiredKeys: Set<String>?
    var after: QueryPosition?
    var limit: Int
}
