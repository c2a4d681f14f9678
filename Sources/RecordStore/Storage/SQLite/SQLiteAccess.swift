import Foundation
import GRDB

/// Reads and writes on one open connection, inside a transaction the connections opened.
struct SQLiteAccess: StorageWriter {
    let db: GRDB.Database
    let assets: URL
    /// Words the problems `integrityProblems` finds.
    let naming: ContainerNaming
    /// What this transaction has looked up already: a batch of saves of one type reads its field marks once.
    let memo = TransactionMemo()

    // MARK: Reading

    func record(_ id: RecordID, keys: Set<String>?) throws -> Record? {
        let statement = try db.cachedStatement(sql: """
            SELECT \(Self.recordColumns) FROM record WHERE zone = ? AND name = ?
            """)
        guard let row = try Row.fetchOne(statement, arguments: [id.zoneID.zoneName, id.recordName]) else { return nil }
        return try Self.decodeRecord(row, from: 0, id: id, assets: assets, keys: keys)
    }

    /// The record columns that `decodeRecord` reads, in its order.
    static let recordColumnNames = ["type", "fields", "created", "modified", "creator", "modifier", "tag"]
    static let recordColumns = recordColumnNames.joined(separator: ", ")

    /// Builds a record from a row holding `recordColumns` from column `first` on; throws `DamagedRow` if it does not decode.
    ///
    /// Columns are read by position: by name, GRDB compares every column name
    /// ignoring case, which cost as much as decoding the fields. A record whose
    /// fields, fully loaded, exceed `Record.maximumSize` is damaged too: the
    /// limit holds on read as it does on write.
    static func decodeRecord(_ row: Row, from first: Int, id: RecordID, assets: URL, keys: Set<String>?) throws -> Record {
        try StoredColumns.decoding("record", key: id.description) {
            let json = try StoredColumns.fieldsText(row, first + 1, "fields")
            let fields = try FieldCoding.decode(json, zone: id.zoneID, assetsDirectory: assets, keys: keys)
            var record = Record(stored: try StoredColumns.text(row, first, "type"), recordID: id, fields: fields)
            if keys == nil, record.storageSize > Record.maximumSize {
                throw StoredColumns.Mismatch(problem: "its fields hold \(record.storageSize) bytes; a record holds at most \(Record.maximumSize)")
            }
            record.creationDate = try StoredColumns.date(row, first + 2, "created")
            record.modificationDate = try StoredColumns.date(row, first + 3, "modified")
            record.creatorUserRecordID = RecordID(recordName: try StoredColumns.text(row, first + 4, "creator"))
            record.lastModifiedUserRecordID = RecordID(recordName: try StoredColumns.text(row, first + 5, "modifier"))
            record.recordChangeTag = try StoredColumns.text(row, first + 6, "tag")
            record.loadedKeys = keys
            return record
        }
    }

    /// The stored records of a batch of saves, and which targets exist, in one statement each rather than one per save.
    func lookUp(saving records: [Record], targets: [RecordID]) throws -> SaveLookUp {
        var found = SaveLookUp()
        guard records.count > 1 else { return found }
        let saving = Set(records.map(\.recordID))
        for id in saving { found.stored[id] = .some(nil) }
        for (zone, ids) in Dictionary(grouping: saving.union(targets), by: \.zoneID) {
            let names = ids.map(\.recordName)
            let statement = try db.makeStatement(sql: """
                SELECT name, \(Self.recordColumns) FROM record
                WHERE zone = ? AND name IN (\(databaseQuestionMarks(count: names.count)))
                """)
            let rows = try Row.fetchCursor(statement, arguments: StatementArguments([zone.zoneName] + names))
            while let row = try rows.next() {
                guard let name = String.fromDatabaseValue(try StoredColumns.value(row, 0)) else { continue }
                let id = RecordID(recordName: name, zoneID: zone)
                found.existing.insert(id)
                guard saving.contains(id) else { continue }
                // A row that does not decode is left to the item's own read, which fails that item alone.
                if let record = try? Self.decodeRecord(row, from: 1, id: id, assets: assets, keys: nil) {
                    found.stored[id] = .some(record)
                } else {
                    found.stored.removeValue(forKey: id)
                }
            }
        }
        return found
    }

    func exists(_ id: RecordID) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM record WHERE zone = ? AND name = ?)"),
                          arguments: [id.zoneID.zoneName, id.recordName]) ?? false
    }

    func recordIDs(inZone zone: String, afterRow row: Int64, limit: Int) throws -> (ids: [RecordID], lastRow: Int64?) {
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT id, name FROM record WHERE zone = ? AND id > ? ORDER BY id LIMIT ?"),
                                       arguments: [zone, row, limit])
        var ids: [RecordID] = []
        var last: Int64?
        while let row = try rows.next() {
            // `id` is the rowid, an integer; a name that reads as no text at all is a damaged row, which `admin check` lists.
            last = Int64.fromDatabaseValue(try StoredColumns.value(row, 0)) ?? last
            if let name = String.fromDatabaseValue(try StoredColumns.value(row, 1)) {
                ids.append(RecordID(recordName: name, zoneID: ZoneID(zoneName: zone)))
            }
        }
        return (ids, last)
    }

    // MARK: Writing

    func upsert(_ record: Record, isNew: Bool) throws {
        try upsert(record, isNew: isNew, searchableKeys: nil)
    }

    /// `upsert`, with the record type's searchable keys when the caller already knows them (a log replay
    /// saving thousands of one type looks them up once).
    func upsert(_ record: Record, isNew: Bool, searchableKeys: [String]?) throws {
        let id = record.recordID
        let fields = try FieldCoding.encode(record.storedFields)
        if fields.utf8.count > StoredColumns.maximumFieldsText {
            throw StoreError(.limitExceeded, "\(id) has \(record.fields.count) fields whose stored form is \(fields.utf8.count) bytes, more than \(StoredColumns.maximumFieldsText); use fewer fields, or move data into an asset.")
        }
        let arguments: StatementArguments = [
            id.zoneID.zoneName, id.recordName, record.recordType, fields,
            (record.creationDate ?? Date()).timeIntervalSince1970,
            (record.modificationDate ?? Date()).timeIntervalSince1970,
            record.creatorUserRecordID?.recordName ?? "", record.lastModifiedUserRecordID?.recordName ?? "",
            record.recordChangeTag ?? "",
        ]
        var rowID: Int64?
        if isNew {
            // A new record's row is the one just made: RETURNING would cost a result table per row.
            try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO record (zone, name, type, fields, created, modified, creator, modifier, tag)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: arguments)
            if db.changesCount > 0 { rowID = db.lastInsertedRowID }
        }
        if rowID == nil {
            rowID = try Int64.fetchOne(db.cachedStatement(sql: """
                INSERT INTO record (zone, name, type, fields, created, modified, creator, modifier, tag)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (zone, name) DO UPDATE SET
                    type = excluded.type, fields = excluded.fields, modified = excluded.modified,
                    modifier = excluded.modifier, tag = excluded.tag
                RETURNING id
                """), arguments: arguments)
        }
        guard let rowID else { throw StoreError(.internalError, "Saving \(id) returned no row.") }
        if !isNew {
            try db.cachedStatement(sql: "DELETE FROM reference WHERE holder = ?").execute(arguments: [rowID])
            try db.cachedStatement(sql: "DELETE FROM asset_use WHERE record = ?").execute(arguments: [rowID])
        }
        struct Link: Hashable { var target: String; var cascade: Bool }
        for link in Set(record.references.map { Link(target: $0.recordID.recordName, cascade: $0.action == .deleteSelf) }) {
            try db.cachedStatement(sql: "INSERT INTO reference (holder, zone, target, cascade) VALUES (?, ?, ?, ?)")
                .execute(arguments: [rowID, id.zoneID.zoneName, link.target, link.cascade])
        }
        for hash in Set(record.assets.compactMap(\.contentHash)) {
            try db.cachedStatement(sql: "INSERT INTO asset_use (hash, record) VALUES (?, ?)").execute(arguments: [hash, rowID])
        }
        try indexSearchText(of: record, rowID: rowID, isNew: isNew, keys: searchableKeys)
    }

    func remove(_ record: Record) throws {
        let id = record.recordID
        let rowID = try Int64.fetchOne(db.cachedStatement(sql: "DELETE FROM record WHERE zone = ? AND name = ? RETURNING id"),
                                       arguments: [id.zoneID.zoneName, id.recordName])
        if let rowID { try removeSearchText(of: record.recordType, rowID: rowID) }
    }

    func removeUndecodable(_ id: RecordID) throws -> String {
        let statement = try db.cachedStatement(sql: "DELETE FROM record WHERE zone = ? AND name = ? RETURNING id, type")
        guard let row = try Row.fetchOne(statement, arguments: [id.zoneID.zoneName, id.recordName]) else { return "" }
        // Its type may be unreadable, so its search text goes whether or not the type has any.
        try db.cachedStatement(sql: "DELETE FROM record_search WHERE rowid = ?").execute(arguments: [try StoredColumns.value(row, 0)])
        return try StoredColumns.textIfAny(row, 1) ?? ""
    }

    func cascadingChildren(of id: RecordID) throws -> [RecordID] {
        try String.fetchAll(db.cachedStatement(sql: """
            SELECT DISTINCT record.name FROM reference JOIN record ON record.id = reference.holder
            WHERE reference.zone = ? AND reference.target = ? AND reference.cascade = 1
            """), arguments: [id.zoneID.zoneName, id.recordName])
            .map { RecordID(recordName: $0, zoneID: id.zoneID) }
    }

    func isAssetInUse(_ hash: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM asset_use WHERE hash = ?)"), arguments: [hash]) ?? false
    }

    func savepoint<T>(_ body: () throws -> T) throws -> T {
        var result: Result<T, any Error> = .failure(StoreError(.internalError, "savepoint did not run"))
        try db.inSavepoint {
            do {
                result = .success(try body())
                return .commit
            } catch {
                result = .failure(error)
                return .rollback
            }
        }
        return try result.get()
    }
}
