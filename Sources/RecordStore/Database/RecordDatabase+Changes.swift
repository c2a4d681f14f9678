import Foundation

/// An opaque position in a database's change feed. It can be stored and used after a restart.
public struct ChangeToken: Hashable, Sendable, Codable {
    let databaseID: String
    let sequence: Int64

    /// The token as bytes, to persist.
    public var data: Data {
        Data("\(databaseID):\(sequence)".utf8)
    }

    /// Restores a token from `data`.
    public init(data: Data) throws {
        let text = String(decoding: data, as: UTF8.self)
        let parts = text.split(separator: ":")
        guard parts.count == 2, let sequence = Int64(parts[1]) else {
            throw StoreError(.invalidArguments, "These bytes are not a change token.")
        }
        self.databaseID = String(parts[0])
        self.sequence = sequence
    }

    init(databaseID: String, sequence: Int64) {
        self.databaseID = databaseID
        self.sequence = sequence
    }
}

/// One entry of the change feed.
public struct RecordChange: Sendable {
    public enum Kind: String, Sendable {
        case created, updated, deleted
    }

    public var kind: Kind
    public var recordID: RecordID
    public var recordType: String
    /// The record as it is now; `nil` if it no longer exists.
    public var record: Record?
    /// For updates and deletes: the fields the record had before. For an update of a type left out of
    /// `fetchChanges(previousFieldsOf:)`, `nil`.
    public var previousFields: [String: FieldValue]?
    public var date: Date
}

/// A record that was deleted: its ID and the type it had.
public struct DeletedRecord: Hashable, Sendable {
    public var recordID: RecordID
    public var recordType: String

    public init(recordID: RecordID, recordType: String) {
        self.recordID = recordID
        self.recordType = recordType
    }
}

/// What changed since a token.
public struct ChangeBatch: Sendable {
    /// Records created or changed, in their current state, each once.
    public var changedRecords: [Record]
    /// Records that were deleted, each once, with their types.
    public var deletedRecords: [DeletedRecord]
    /// Every change in order, including several changes to one record.
    public var changes: [RecordChange]
    /// Where the next fetch continues.
    public var token: ChangeToken
    /// More changes wait; fetch again with `token`.
    public var moreComing: Bool
}

extension RecordDatabase {
    /// The token for "now": a fetch with it returns only later changes.
    public func currentChangeToken() throws -> ChangeToken {
        try storage.read { ChangeToken(databaseID: storage.databaseID, sequence: try $0.latestSequence()) }
    }

    /// Fetches what changed after `token` (everything kept, if `nil`), in one zone or all of them.
    ///
    /// Deletions by cascade are included. A token from before the kept history,
    /// or from another database, gets `changeTokenExpired`: refetch what you need
    /// and start again from `currentChangeToken()`.
    ///
    /// `previousFieldsOf` names the record types whose updates should carry their `previousFields`
    /// (a query subscription's types, which compare before with after); `nil`, every type. Deletions
    /// always carry them.
    ///
    /// Changes to records of a type in `passingOver` are left out of the batch, and the token moves past
    /// them all the same: a reader that shows none of a type skips the cost of reading each change to it.
    /// Read what is there with a query when you come to need them.
    public func fetchChanges(in zone: ZoneID? = nil, since token: ChangeToken?, limit: Int = 400,
                             previousFieldsOf types: Set<String>? = nil, passingOver passed: Set<String> = []) throws -> ChangeBatch {
        try ChangeRow.$passedOver.withValue(passed) {
            try ChangeRow.$previousWanted.withValue(types) { try readChanges(in: zone, since: token, limit: limit) }
        }
    }

    private func readChanges(in zone: ZoneID?, since token: ChangeToken?, limit: Int) throws -> ChangeBatch {
        let limit = max(1, limit)
        let start = token?.sequence ?? 0
        // The bounds and the scan come from one snapshot. One entry past the limit tells whether
        // more are coming. Damaged entries were skipped but still count: the token moves past
        // them, so one never stalls the feed.
        let (bounds, scanned): (ChangeBounds, ChangeScan?)
        if let zone {
            (bounds, scanned) = try storage.read { reader in
                if try reader.zoneKeepsChanges(zone.zoneName) == false {
                    throw StoreError(.invalidArguments, "Zone '\(zone.zoneName)' keeps no change feed: it was saved without the fetchChanges capability.")
                }
                return try reader.changesWithBounds(after: start, zone: zone.zoneName, limit: limit + 1)
            }
        } else {
            // The sync engine's question on every wake-up: the storage may answer it without a transaction.
            (bounds, scanned) = try storage.changesWithBounds(after: start, zone: nil, limit: limit + 1)
        }
        // Checked once the storage is open and knows its database ID, so a server that is down says so.
        if let token, token.databaseID != storage.databaseID {
            throw StoreError(.changeTokenExpired, "The change token belongs to another database (was the file replaced?); fetch everything again.")
        }
        guard let scan = scanned else {
            throw StoreError(.changeTokenExpired, "The change token is older than the kept history; fetch everything again and start from a new token.")
        }
        let moreComing = scan.sequences.count > limit
        var rows = scan.rows
        let end: Int64
        if moreComing {
            end = scan.sequences[limit - 1]
            rows.removeAll { $0.sequence > end }
        } else {
            end = max(start, bounds.latest)
        }

        var current: [RecordID: Record?] = [:]
        var order: [RecordID] = []
        var changes: [RecordChange] = []
        for row in rows {
            if current[row.recordID] == nil {
                current[row.recordID] = .some(row.current)
            } else {
                order.removeAll { $0 == row.recordID }
            }
            order.append(row.recordID)
            changes.append(RecordChange(
                kind: RecordChange.Kind(row.kind), recordID: row.recordID, recordType: row.recordType,
                record: current[row.recordID] ?? nil, previousFields: row.previousFields, date: row.date))
        }
        var changed: [Record] = []
        var deleted: [DeletedRecord] = []
        for id in order {
            if let record = current[id] ?? nil {
                changed.append(record)
            } else if let type = rows.last(where: { $0.recordID == id })?.recordType {
                deleted.append(DeletedRecord(recordID: id, recordType: type))
            }
        }
        return ChangeBatch(changedRecords: changed, deletedRecords: deleted, changes: changes,
                           token: ChangeToken(databaseID: storage.databaseID, sequence: end), moreComing: moreComing)
    }
}

extension RecordChange.Kind {
    init(_ kind: ChangeRow.Kind) {
        switch kind {
        case .created: self = .created
        case .updated: self = .updated
        case .deleted: self = .deleted
        }
    }
}
