import Foundation
import GRDB

/// The change log on SQLite: the `change` table, read as a feed and pruned to its limit.
extension SQLiteAccess {
    func changes(after sequence: Int64, zone: String?, limit: Int) throws -> ChangeScan {
        try changes(after: sequence, zone: zone, limit: limit, reporting: DamagedRowLog.note)
    }

    /// The bounds and the scan in one statement, whose one snapshot holds both, inside a transaction or
    /// not (`SQLiteStorage.changesWithBounds`). Each row carries the bounds in its last two columns;
    /// with no entry after `sequence`, one row carries only them.
    func changesWithBounds(after sequence: Int64, zone: String?, limit: Int) throws -> (bounds: ChangeBounds, scan: ChangeScan?) {
        let rows = try feed(after: sequence, zone: zone, limit: limit, withBounds: true)
        var bounds: ChangeBounds?
        let scan = try changes(in: rows, reporting: DamagedRowLog.note) { row in
            if bounds == nil { bounds = try Self.changeBounds(row, from: Self.boundsColumn) }
        }
        let found = bounds ?? ChangeBounds(latest: 0, pruned: 0)
        return (found, sequence >= found.pruned ? scan : nil)
    }

    /// `changes(after:zone:limit:)`, handing each damaged entry to `reporting`.
    func changes(after sequence: Int64, zone: String?, limit: Int, reporting: (DamagedRow) -> Void) throws -> ChangeScan {
        try changes(in: feed(after: sequence, zone: zone, limit: limit, withBounds: false), reporting: reporting)
    }

    /// The feed's rows after `sequence`. Types passed over (`ChangeRow.passedOver`) are left out by the
    /// statement itself, before their records are looked up: a reader that follows no presence steps over a
    /// hundred people's heartbeats for little more than reading their type.
    private func feed(after sequence: Int64, zone: String?, limit: Int, withBounds: Bool) throws -> RowCursor {
        let passed = ChangeRow.passedOver
        let sql: String
        var arguments: StatementArguments = zone.map { [$0, sequence] } ?? [sequence]
        if passed.isEmpty {
            sql = zone == nil ? (withBounds ? Self.changesWithBoundsSQL : Self.changesSQL) : (withBounds ? Self.changesInZoneWithBoundsSQL : Self.changesInZoneSQL)
        } else {
            sql = zone == nil ? (withBounds ? Self.passingWithBoundsSQL : Self.passingSQL) : (withBounds ? Self.passingInZoneWithBoundsSQL : Self.passingInZoneSQL)
            let list = try JSONEncoder().encode(passed.sorted())
            arguments += [String(decoding: list, as: UTF8.self)]
        }
        arguments += [limit]
        return try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
    }

    /// The entries of `rows`, each row shown to `seeing` before it is read; a row whose `seq` is NULL
    /// holds no entry (the bounds' row of `changesWithBounds` when none follows them).
    private func changes(in rows: RowCursor, reporting: (DamagedRow) -> Void, seeing: (Row) throws -> Void = { _ in }) throws -> ChangeScan {
        // A record changed several times in one batch is decoded once. A row that does
        // not decode is stepped over; its sequence still counts, so the feed moves past it.
        var scan = ChangeScan()
        var decoded: [RecordID: Record] = [:]
        let passedOver = ChangeRow.passedOver
        while let row = try rows.next() {
            try seeing(row)
            if try StoredColumns.value(row, 0).isNull { continue }
            // `seq` is the rowid, an integer, unless someone rewrote the table's definition behind SQLite's back.
            guard let seq = Int64.fromDatabaseValue(try StoredColumns.value(row, 0)) else {
                reporting(DamagedRow(table: "change", key: StoredColumns.label(row, 0), problem: "seq is not an integer"))
                continue
            }
            scan.sequences.append(seq)
            if !passedOver.isEmpty, let type = try? StoredColumns.text(row, 3, "type"), passedOver.contains(type) { continue }
            do {
                scan.rows.append(try decodeChange(row, sequence: seq, decoded: &decoded))
            } catch let damage as DamagedRow {
                reporting(damage)
            }
        }
        return scan
    }

    /// Reads one row of the SELECT in `changes`, by position; throws `DamagedRow` if it or its record does not decode.
    private func decodeChange(_ row: Row, sequence: Int64, decoded: inout [RecordID: Record]) throws -> ChangeRow {
        try StoredColumns.decoding("change", key: "sequence \(sequence)") {
            let id = RecordID(recordName: try StoredColumns.text(row, 2, "name"),
                              zoneID: ZoneID(zoneName: try StoredColumns.text(row, 1, "zone")))
            let kindNumber = try StoredColumns.integer(row, 4, "kind")
            guard let kind = ChangeRow.Kind(rawValue: Int(kindNumber)) else {
                throw StoredColumns.Mismatch(problem: "kind is \(kindNumber), which is no kind of change")
            }
            let type = try StoredColumns.text(row, 3, "type")
            let previous = try StoredColumns.optionalFieldsText(row, 5, "previous")
            var change = ChangeRow(
                sequence: sequence, recordID: id, recordType: type, kind: kind,
                previousFields: try ChangeRow.previousFields(previous, kind: kind, type: type, zone: id.zoneID, assets: assets),
                date: try StoredColumns.date(row, 6, "at"), current: nil)
            // `r.id` is a rowid too: an integer, or NULL when the record is gone.
            if try !StoredColumns.value(row, 7).isNull {
                let current = try decoded[id] ?? Self.decodeRecord(row, from: 8, id: id, assets: assets, keys: nil)
                decoded[id] = current
                change.current = current
            }
            return change
        }
    }

    /// Each change with its record as it is now, in one statement (the record's columns are NULL once it is gone).
    /// Built once: the feed runs it on every wake-up.
    private static let changesSelect = """
        SELECT c.seq, c.zone, c.name, c.type, c.kind, c.previous, c.at, r.id, \(recordColumnNames.map { "r." + $0 }.joined(separator: ", "))
        FROM change c LEFT JOIN record r ON r.zone = c.zone AND r.name = c.name
        """
    private static let changesSQL = changesSelect + " WHERE c.seq > ? ORDER BY c.seq LIMIT ?"
    private static let changesInZoneSQL = changesSelect + " WHERE c.zone = ? AND c.seq > ? ORDER BY c.seq LIMIT ?"
    private static func withBounds(_ changes: String) -> String {
        "SELECT c.*, b.* FROM (\(changeBoundsSQL)) b LEFT JOIN (\(changes)) c ON 1 ORDER BY c.seq"
    }
    private static let changesWithBoundsSQL = withBounds(changesSQL)
    private static let changesInZoneWithBoundsSQL = withBounds(changesInZoneSQL)
    /// The same, leaving out the types in a JSON list.
    private static let passing = " AND c.type NOT IN (SELECT value FROM json_each(?))"
    private static let passingSQL = changesSelect + " WHERE c.seq > ?" + passing + " ORDER BY c.seq LIMIT ?"
    private static let passingInZoneSQL = changesSelect + " WHERE c.zone = ? AND c.seq > ?" + passing + " ORDER BY c.seq LIMIT ?"
    private static let passingWithBoundsSQL = withBounds(passingSQL)
    private static let passingInZoneWithBoundsSQL = withBounds(passingInZoneSQL)
    /// Where the bounds begin in a row of `changesWithBounds`: after the change's 8 columns and its record's.
    private static let boundsColumn = 8 + recordColumnNames.count

    func changeBounds() throws -> ChangeBounds {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: Self.changeBoundsSQL)) else { return ChangeBounds(latest: 0, pruned: 0) }
        return try Self.changeBounds(row, from: 0)
    }

    /// The log's newest entry and how far it was pruned. The mark is read as text, whatever type someone stored it as.
    private static let changeBoundsSQL = """
        SELECT (SELECT seq FROM change ORDER BY seq DESC LIMIT 1) AS latest,
               (SELECT CAST(value AS TEXT) FROM fatchat_meta WHERE key = 'pruned_through') AS pruned
        """

    /// The bounds from a row holding `changeBoundsSQL`'s two columns from column `first` on.
    private static func changeBounds(_ row: Row, from first: Int) throws -> ChangeBounds {
        let pruned = Int64(String.fromDatabaseValue(try StoredColumns.value(row, first + 1)) ?? "0") ?? 0
        return ChangeBounds(latest: Int64.fromDatabaseValue(try StoredColumns.value(row, first)) ?? pruned, pruned: pruned)
    }

    func appendChange(_ id: RecordID, type: String, kind: ChangeRow.Kind, previousFields: [String: FieldValue]?, date: Date) throws {
        try db.cachedStatement(sql: "INSERT INTO change (zone, name, type, kind, previous, at) VALUES (?, ?, ?, ?, ?, ?)")
            .execute(arguments: [id.zoneID.zoneName, id.recordName, type, kind.rawValue,
                                   try previousFields.map(FieldCoding.encode), date.timeIntervalSince1970])
    }

    func pruneChanges(keeping keep: Int) throws {
        // Every commit asks: one statement reads both numbers.
        let bounds = try changeBounds()
        let cutoff = bounds.latest - Int64(keep)
        guard cutoff > bounds.pruned else { return }
        try db.cachedStatement(sql: "DELETE FROM change WHERE seq <= ?").execute(arguments: [cutoff])
        try db.cachedStatement(sql: "UPDATE fatchat_meta SET value = ? WHERE key = 'pruned_through'").execute(arguments: [String(cutoff)])
    }

    /// Writes the change rows a bulk load held back, leaving the table as `appendChange` for each and
    /// `pruneChanges(keeping:)` would have: numbered as if every change had been written, and pruned.
    func appendChanges(_ held: HeldChanges, keeping keep: Int) throws {
        let kept = held.kept
        guard !kept.isEmpty else { return }
        var sequence = try latestSequence() + Int64(held.count - kept.count)
        for change in kept {
            sequence += 1
            try db.cachedStatement(sql: "INSERT INTO change (seq, zone, name, type, kind, previous, at) VALUES (?, ?, ?, ?, ?, ?, ?)")
                .execute(arguments: [sequence, change.id.zoneID.zoneName, change.id.recordName, change.type, change.kind.rawValue,
                                     try change.previousFields.map(FieldCoding.encode), change.date.timeIntervalSince1970])
        }
        try pruneChanges(keeping: keep)
    }
}

/// The change rows of a bulk load, of which only the last `capacity` are kept: a catch-up of a million
/// records would write a million rows only for pruning to delete all but the last few.
struct HeldChanges {
    struct Change {
        var id: RecordID
        var type: String
        var kind: ChangeRow.Kind
        var previousFields: [String: FieldValue]?
        var date: Date
    }

    let capacity: Int
    /// How many changes were held, kept or not.
    private(set) var count = 0
    private var ring: [Change] = []

    /// `capacity` is at least 1, so the last change's number always reaches the table.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
        ring.reserveCapacity(min(self.capacity, 1 << 16))
    }

    mutating func append(_ change: Change) {
        if ring.count < capacity {
            ring.append(change)
        } else {
            ring[count % capacity] = change
        }
        count += 1
    }

    /// The kept changes, oldest first.
    var kept: [Change] {
        guard ring.count == capacity else { return ring }
        let start = count % capacity
        return Array(ring[start...] + ring[..<start])
    }
}
