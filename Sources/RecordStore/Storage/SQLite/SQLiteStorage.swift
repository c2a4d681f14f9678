import Foundation
import GRDB
import Synchronization

/// `RecordStorage` on one SQLite file.
final class SQLiteStorage: RecordStorage {
    let databaseID: String
    let connections: any SQLiteConnections
    let assetsDirectory: URL
    let path: String

    /// Opens the database at `path`, which must exist (it may be empty), in the given mode.
    init(path: String, assetsDirectory: URL, mode: JournalMode) throws {
        let settings = SQLiteSettings(path: path)
        switch mode {
        case .local: connections = try LocalConnections(settings: settings)
        case .network: connections = try NetworkConnections(settings: settings)
        }
        self.assetsDirectory = assetsDirectory
        self.path = path
        databaseID = try connections.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM fatchat_meta WHERE key = 'database_id'") ?? ""
        }
        try connections.read { db in try checkSchema(db) }
    }

    /// The file and `schema_version` whose schema `SchemaCheck` last accepted.
    private let acceptedSchema = Mutex<(file: FileIdentity, version: Int64)?>(nil)

    /// Refuses a schema that Fatchat did not make; checked again whenever SQLite's schema cookie moves or the file is replaced.
    ///
    /// Every write transaction calls this first, with the write lock held, so a
    /// trigger planted while this process runs is refused before any of our
    /// writes could fire it. An unchanged file and cookie cost a `stat` and one pragma read.
    private func checkSchema(_ db: GRDB.Database) throws {
        let version = try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA schema_version")) ?? 0
        let file = try FileIdentity.of(path)
        if acceptedSchema.withLock({ $0?.file == file && $0?.version == version }) { return }
        try SchemaCheck.verify(db, path: path)
        acceptedSchema.withLock { $0 = (file, version) }
    }

    func read<T>(_ body: (any StorageReader) throws -> T) throws -> T {
        do {
            return try connections.read { db in try body(SQLiteAccess(db: db, assets: assetsDirectory)) }
        } catch let damage as DamagedRow {
            throw damage.storeError
        }
    }

    func write<T>(_ body: (any StorageWriter) throws -> T) throws -> T {
        do {
            return try connections.write { db in
                try checkSchema(db)
                return try body(SQLiteAccess(db: db, assets: assetsDirectory))
            }
        } catch let damage as DamagedRow {
            throw damage.storeError
        }
    }
}

/// Reads and writes on one open connection, inside a transaction the connections opened.
struct SQLiteAccess: StorageWriter {
    let db: GRDB.Database
    let assets: URL

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

    func exists(_ id: RecordID) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM record WHERE zone = ? AND name = ?)"),
                          arguments: [id.zoneID.zoneName, id.recordName]) ?? false
    }

    func recordIDs(inZone name: String) throws -> [RecordID] {
        try String.fetchAll(db, sql: "SELECT name FROM record WHERE zone = ?", arguments: [name])
            .map { RecordID(recordName: $0, zoneID: ZoneID(zoneName: name)) }
    }

    func zoneNames() throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM zone ORDER BY created, name")
    }

    func zoneKeepsChanges(_ name: String) throws -> Bool? {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT changes FROM zone WHERE name = ?"), arguments: [name])
    }

    func changes(after sequence: Int64, zone: String?, limit: Int) throws -> ChangeScan {
        try changes(after: sequence, zone: zone, limit: limit, reporting: DamagedRowLog.note)
    }

    /// `changes(after:zone:limit:)`, handing each damaged entry to `reporting`.
    func changes(after sequence: Int64, zone: String?, limit: Int, reporting: (DamagedRow) -> Void) throws -> ChangeScan {
        // Each change with its record as it is now, in one statement (the record's columns are NULL once it is gone).
        let select = """
            SELECT c.seq, c.zone, c.name, c.type, c.kind, c.previous, c.at, r.id, \(Self.recordColumnNames.map { "r." + $0 }.joined(separator: ", "))
            FROM change c LEFT JOIN record r ON r.zone = c.zone AND r.name = c.name
            """
        let rows: RowCursor
        if let zone {
            rows = try Row.fetchCursor(db.cachedStatement(sql: select + " WHERE c.zone = ? AND c.seq > ? ORDER BY c.seq LIMIT ?"),
                                       arguments: [zone, sequence, limit])
        } else {
            rows = try Row.fetchCursor(db.cachedStatement(sql: select + " WHERE c.seq > ? ORDER BY c.seq LIMIT ?"),
                                       arguments: [sequence, limit])
        }
        // A record changed several times in one batch is decoded once. A row that does
        // not decode is stepped over; its sequence still counts, so the feed moves past it.
        var scan = ChangeScan()
        var decoded: [RecordID: Record] = [:]
        while let row = try rows.next() {
            // `seq` is the rowid, an integer, unless someone rewrote the table's definition behind SQLite's back.
            guard let seq = Int64.fromDatabaseValue(row[0]) else {
                reporting(DamagedRow(table: "change", key: StoredColumns.label(row, 0), problem: "seq is not an integer"))
                continue
            }
            scan.sequences.append(seq)
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
            let previous = try StoredColumns.optionalFieldsText(row, 5, "previous")
            var change = ChangeRow(
                sequence: sequence, recordID: id, recordType: try StoredColumns.text(row, 3, "type"), kind: kind,
                previousFields: try previous.map { try FieldCoding.decode($0, zone: id.zoneID, assetsDirectory: assets) },
                date: try StoredColumns.date(row, 6, "at"), current: nil)
            // `r.id` is a rowid too: an integer, or NULL when the record is gone.
            if (row[7] as Int64?) != nil {
                let current = try decoded[id] ?? Self.decodeRecord(row, from: 8, id: id, assets: assets, keys: nil)
                decoded[id] = current
                change.current = current
            }
            return change
        }
    }

    func latestSequence() throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM change ORDER BY seq DESC LIMIT 1")) ?? prunedThrough()
    }

    func prunedThrough() throws -> Int64 {
        Int64(try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM fatchat_meta WHERE key = 'pruned_through'")) ?? "0") ?? 0
    }

    // MARK: Writing

    func upsert(_ record: Record, isNew: Bool) throws {
        let id = record.recordID
        let fields = try FieldCoding.encode(record.fields)
        if fields.utf8.count > StoredColumns.maximumFieldsText {
            throw StoreError(.limitExceeded, "\(id) has \(record.fields.count) fields whose stored form is \(fields.utf8.count) bytes, more than \(StoredColumns.maximumFieldsText); use fewer fields, or move data into an asset.")
        }
        let rowID = try Int64.fetchOne(db.cachedStatement(sql: """
            INSERT INTO record (zone, name, type, fields, created, modified, creator, modifier, tag)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (zone, name) DO UPDATE SET
                type = excluded.type, fields = excluded.fields, modified = excluded.modified,
                modifier = excluded.modifier, tag = excluded.tag
            RETURNING id
            """), arguments: [
                id.zoneID.zoneName, id.recordName, record.recordType, fields,
                (record.creationDate ?? Date()).timeIntervalSince1970,
                (record.modificationDate ?? Date()).timeIntervalSince1970,
                record.creatorUserRecordID?.recordName ?? "", record.lastModifiedUserRecordID?.recordName ?? "",
                record.recordChangeTag ?? "",
            ])
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
        try indexSearchText(of: record, rowID: rowID, isNew: isNew)
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
        try db.cachedStatement(sql: "DELETE FROM record_search WHERE rowid = ?").execute(arguments: [row[0] as DatabaseValue])
        return String.fromDatabaseValue(row[1]) ?? ""
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

    func appendChange(_ id: RecordID, type: String, kind: ChangeRow.Kind, previousFields: [String: FieldValue]?, date: Date) throws {
        try db.cachedStatement(sql: "INSERT INTO change (zone, name, type, kind, previous, at) VALUES (?, ?, ?, ?, ?, ?)")
            .execute(arguments: [id.zoneID.zoneName, id.recordName, type, kind.rawValue,
                                   try previousFields.map(FieldCoding.encode), date.timeIntervalSince1970])
    }

    func pruneChanges(keeping keep: Int) throws {
        let latest = try latestSequence()
        let cutoff = latest - Int64(keep)
        guard cutoff > (try prunedThrough()) else { return }
        try db.cachedStatement(sql: "DELETE FROM change WHERE seq <= ?").execute(arguments: [cutoff])
        try db.cachedStatement(sql: "UPDATE fatchat_meta SET value = ? WHERE key = 'pruned_through'").execute(arguments: [String(cutoff)])
    }

    func createZone(_ name: String, date: Date, keepsChanges: Bool) throws {
        try db.cachedStatement(sql: """
            INSERT INTO zone (name, created, changes) VALUES (?, ?, ?)
            ON CONFLICT (name) DO UPDATE SET changes = excluded.changes
            """).execute(arguments: [name, date.timeIntervalSince1970, keepsChanges])
    }

    func removeZone(_ name: String) throws {
        try db.execute(sql: "DELETE FROM zone WHERE name = ?", arguments: [name])
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

extension SQLiteStorage {
    /// Local mode: `PRAGMA data_version` on a dedicated connection. Network
    /// mode: the newest change sequence, read through a fresh connection.
    func makeChangeSignal() throws -> any StorageChangeSignal {
        guard let local = connections as? LocalConnections else { return makeSequenceSignal() }
        return try DataVersionSignal(path: local.path)
    }
}

/// Watches `PRAGMA data_version` on its own read-only connection, which
/// changes whenever any other connection commits.
final class DataVersionSignal: StorageChangeSignal {
    private let queue: DatabaseQueue
    private let last = Mutex<Int64?>(nil)

    init(path: String) throws {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(1)
        do {
            queue = try DatabaseQueue(path: path, configuration: config)
        } catch {
            throw StoreError.translating(error, path: path)
        }
    }

    func hasChanged() throws -> Bool {
        let version = try queue.inDatabase { try Int64.fetchOne($0.cachedStatement(sql: "PRAGMA data_version")) }
        return last.withLock { previous in
            defer { previous = version }
            return previous != version
        }
    }
}

extension SQLiteStorage {
    /// The problems `integrityProblems` finds in the file at `path`, opened read-only with no migration.
    ///
    /// Opening a database for use refuses a schema Fatchat did not make; this
    /// only reads, so it can still list what is wrong with such a file, and
    /// nothing planted in it can run.
    static func inspect(path: String, assetsDirectory: URL) throws -> [String] {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(5)
        do {
            _ = try FileIdentity.of(path)
            let queue = try DatabaseQueue(path: path, configuration: config)
            defer { try? queue.close() }
            return try queue.read { db in
                guard try db.tableExists("fatchat_meta") else {
                    return ["\(path) is not a Fatchat database"]
                }
                return try SQLiteAccess(db: db, assets: assetsDirectory).integrityProblems()
            }
        } catch let damage as DamagedRow {
            throw damage.storeError
        } catch {
            throw StoreError.translating(error, path: path)
        }
    }
}
