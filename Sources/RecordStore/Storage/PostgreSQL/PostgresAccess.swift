import Foundation
import PostgresNIO
import Synchronization

/// Reads and writes on the connection, inside a transaction `PostgresStorage` opened: records, references, assets and zones.
struct PostgresAccess: StorageWriter {
    /// The connection, for statements that must not send the buffered writes first: the ones that send them.
    let transport: PostgresLink
    let assets: URL
    let naming: ContainerNaming
    /// What this client keeps for as long as the storage.
    let lasting: LastingAnswers
    /// What this transaction has looked up already: each round trip to the server is paid once.
    let memo = TransactionMemo()
    /// BEGIN, the write lock, saves, change-log rows and a guess, not sent yet.
    let buffer = PostgresWriteBuffer()
    /// The database's schema version (`PostgresSchema.version`), which says what it can be sent.
    let schemaVersion: Int
    /// Whether a batch that only creates may be saved on a guess instead of a look-up (`guessLookUp`).
    let mayGuess: Bool

    /// With `begin`, a write transaction: its first statement sends `begin` and takes the write lock first.
    init(link: PostgresLink, assets: URL, naming: ContainerNaming, lasting: LastingAnswers, schemaVersion: Int,
         begin: String? = nil, mayGuess: Bool = false) {
        self.transport = link
        self.assets = assets
        self.naming = naming
        self.lasting = lasting
        self.schemaVersion = schemaVersion
        self.mayGuess = mayGuess && schemaVersion >= 3
        buffer.beginPending = begin
        buffer.lockPending = begin != nil
    }

    /// The connection, once the buffered writes are sent: every statement sees the writes before it.
    var link: PostgresLink {
        sendBufferedWrites()
        return transport
    }

    /// What a client keeps between transactions.
    final class LastingAnswers: Sendable {
        /// Whether each zone keeps a change log, once read: the public database's only zone never changes.
        let keepsChanges = Mutex<[String: Bool]>([:])
        /// Each record type's searchable keys as last read. Another client may have changed them
        /// since, so they serve only a guess, which the server checks (`PostgresWriteSQL.guessChecks`).
        let searchableKeys = Mutex<[String: [String]]>([:])
    }

    /// The record columns `decodeRecord` reads, in its order.
    static let recordColumns = "type, fields::text, created, modified, creator, modifier, tag"
    static let recordColumnCount = 7

    /// `recordColumns` of the table named `alias` in a join.
    static func recordColumns(of alias: String) -> String {
        recordColumns.split(separator: ",").map { "\(alias)." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
    }

    /// Builds a record from a row holding `recordColumns` from column `first` on; throws `DamagedRow` if it does not decode.
    func decodeRecord(_ row: PostgresColumns, from first: Int, id: RecordID, keys: Set<String>?) throws -> Record {
        let record = try StoredColumns.decoding("record", key: id.description) {
            let json = try row.fieldsText(first + 1, "fields")
            let fields = try FieldCoding.decode(json, zone: id.zoneID, assetsDirectory: assets, keys: keys)
            var record = Record(stored: try row.text(first, "type"), recordID: id, fields: fields)
            if keys == nil, record.storageSize > Record.maximumSize {
                throw StoredColumns.Mismatch(problem: "its fields hold \(record.storageSize) bytes; a record holds at most \(Record.maximumSize)")
            }
            record.creationDate = try row.date(first + 2, "created")
            record.modificationDate = try row.date(first + 3, "modified")
            record.creatorUserRecordID = RecordID(recordName: try row.text(first + 4, "creator"))
            record.lastModifiedUserRecordID = RecordID(recordName: try row.text(first + 5, "modifier"))
            record.recordChangeTag = try row.text(first + 6, "tag")
            record.loadedKeys = keys
            return record
        }
        // Assets live on the server; a client keeps a copy of each in its own `assets/`, where `Asset.fileURL` points.
        // A copy that cannot be made leaves the record readable; the asset's file is then missing, as a deleted one would be.
        try? fetchAssets(of: record)
        return record
    }

    /// Copies into the local `assets/` folder, from the server, the content of each asset of `record` it does not hold yet.
    func fetchAssets(of record: Record) throws {
        let store = AssetStore(directory: assets, naming: naming)
        let missing = Set(record.assets.compactMap(\.contentHash)).filter { AssetName.isValid($0) && !FileManager.default.fileExists(atPath: store.url(for: $0).path) }
        guard !missing.isEmpty else { return }
        var arguments = PostgresArguments()
        for row in try link.rows("SELECT hash, content FROM fatchat.asset WHERE hash = ANY(\(arguments.bind(Array(missing)))::text[])", arguments.binds) {
            let columns = PostgresColumns(row)
            try store.place(hash: try columns.text(0, "hash"), content: try columns.bytes(1, "content"))
        }
    }

    /// Sends the server the content of each of `hashes` it does not hold yet, from the local `assets/` folder.
    private func sendAssets(_ hashes: [String]) throws {
        var query = PostgresArguments()
        let held = Set(try link.rows("SELECT hash FROM fatchat.asset WHERE hash = ANY(\(query.bind(hashes))::text[])", query.binds)
            .map { try PostgresColumns($0).text(0, "hash") })
        let store = AssetStore(directory: assets, naming: naming)
        for hash in hashes where !held.contains(hash) {
            var insert = PostgresArguments()
            let sql = "INSERT INTO fatchat.asset (hash, content) VALUES (\(insert.bind(hash)), \(insert.bind(ByteBuffer(bytes: try store.contents(of: hash))))) ON CONFLICT (hash) DO NOTHING"
            try link.execute(sql, insert.binds)
        }
    }

    func forgetAsset(_ hash: String) throws {
        var arguments = PostgresArguments()
        try link.execute("SELECT fatchat.drop_unused_asset(\(arguments.bind(hash)))", arguments.binds)
    }

    // MARK: Reading

    func record(_ id: RecordID, keys: Set<String>?) throws -> Record? {
        var arguments = PostgresArguments()
        let sql = "SELECT \(Self.recordColumns) FROM fatchat.record WHERE zone = \(arguments.bind(id.zoneID.zoneName)) AND name = \(arguments.bind(id.recordName))"
        guard let row = try link.rows(sql, arguments.binds).first else { return nil }
        return try decodeRecord(PostgresColumns(row), from: 0, id: id, keys: keys)
    }

    /// One round trip for every look-up of a batch of saves: the records as stored, which targets
    /// exist, and the searchable keys of the records' types.
    func lookUp(saving records: [Record], targets: [RecordID]) throws -> SaveLookUp {
        let ids = records.map(\.recordID)
        let all = Array(Set(ids + targets))
        let types = Array(Set(records.map(\.recordType)).filter { memo.searchableKeys[$0] == nil })
        guard !all.isEmpty else { return SaveLookUp() }
        var binds = PostgresBindings()
        binds.append(all.map(\.zoneID.zoneName))
        binds.append(all.map(\.recordName))
        binds.append(types)
        // The first statement of a write takes the lock; on schema 2 the look-up takes it, sparing a round trip.
        let rows: [PostgresRow]
        if schemaVersion >= 2, buffer.lockPending, buffer.isEmpty {
            sendBegin()
            buffer.lockPending = false
            rows = try transport.preparedRows(LookUpLocked.self, binds)
        } else {
            rows = try link.preparedRows(LookUp.self, binds)
        }
        var found = SaveLookUp()
        for id in ids { found.stored[id] = .some(nil) }
        let saving = Set(ids)
        var marks: [PostgresRow] = []
        for row in rows {
            let columns = PostgresColumns(row)
            // The rows of the field marks come last, with no zone.
            if columns.isNull(0) {
                marks.append(row)
                continue
            }
            let id = RecordID(recordName: try columns.text(1, "name"), zoneID: ZoneID(zoneName: try columns.text(0, "zone")))
            found.existing.insert(id)
            guard saving.contains(id) else { continue }
            // A row that does not decode is left to the item's own read, which fails that item alone.
            if let record = try? decodeRecord(columns, from: 2, id: id, keys: nil) {
                found.stored[id] = .some(record)
            } else {
                found.stored.removeValue(forKey: id)
            }
        }
        let byType = try Self.fieldMarks(marks, from: PostgresWriteSQL.marksColumn)
        for type in types { rememberSearchableKeys(Self.searchableKeys(byType[type] ?? [:]), of: type) }
        return found
    }

    /// Saves that only create, guessed without a round trip: nothing stored, every target there, and
    /// each type's searchable keys as last read. `fatchat.save_guessed` checks it all when the batch
    /// is sent; `nil` (look up instead) before this client has read a type's searchable keys.
    func guessLookUp(saving records: [Record], targets: [RecordID]) throws -> SaveLookUp? {
        guard mayGuess else { return nil }
        let types = Array(Set(records.map(\.recordType)))
        let known = lasting.searchableKeys.withLock { known in types.compactMap { type in known[type].map { (type, $0) } } }
        guard known.count == types.count else { return nil }
        for (type, keys) in known { memo.searchableKeys[type] = keys }
        let ids = records.map(\.recordID)
        buffer.guess = PostgresWriteBuffer.Guess(absent: ids, targets: targets, types: types,
                                                 searchable: known.flatMap { type, keys in keys.map { (type, $0) } })
        return SaveLookUp(stored: Dictionary(uniqueKeysWithValues: ids.map { ($0, Record?.none) }), existing: Set(targets))
    }

    /// The look-up of a batch of saves (`PostgresWriteSQL.lookUp`), kept prepared: every commit runs
    /// it, so the server plans it once per connection.
    private enum LookUp: PreparedSQL {
        static let name = "fatchat_look_up"
        static let sql = PostgresWriteSQL.lookUp
    }

    /// The look-up, after the write lock is taken, in one round trip (schema 2).
    private enum LookUpLocked: PreparedSQL {
        static let name = "fatchat_look_up_locked"
        static let sql = "SELECT * FROM fatchat.look_up_locked($1::text[], $2::text[], $3::text[])"
    }

    func exists(_ id: RecordID) throws -> Bool {
        var arguments = PostgresArguments()
        let sql = "SELECT 1 FROM fatchat.record WHERE zone = \(arguments.bind(id.zoneID.zoneName)) AND name = \(arguments.bind(id.recordName))"
        return try !link.rows(sql, arguments.binds).isEmpty
    }

    func recordIDs(inZone zone: String, afterRow row: Int64, limit: Int) throws -> (ids: [RecordID], lastRow: Int64?) {
        var arguments = PostgresArguments()
        let sql = "SELECT id, name FROM fatchat.record WHERE zone = \(arguments.bind(zone)) AND id > \(arguments.bind(row)) ORDER BY id LIMIT \(arguments.bind(limit))"
        var ids: [RecordID] = []
        var last: Int64?
        for row in try link.rows(sql, arguments.binds) {
            let columns = PostgresColumns(row)
            last = try columns.integer(0, "id")
            ids.append(RecordID(recordName: try columns.text(1, "name"), zoneID: ZoneID(zoneName: zone)))
        }
        return (ids, last)
    }

    func zoneNames() throws -> [String] {
        try link.rows("SELECT name FROM fatchat.zone ORDER BY created, name").map { try PostgresColumns($0).text(0, "name") }
    }

    func zoneKeepsChanges(_ name: String) throws -> Bool? {
        if let known = lasting.keepsChanges.withLock({ $0[name] }) { return known }
        var arguments = PostgresArguments()
        guard let row = try link.rows("SELECT changes FROM fatchat.zone WHERE name = \(arguments.bind(name))", arguments.binds).first else { return nil }
        let keeps = try PostgresColumns(row).bool(0, "changes")
        lasting.keepsChanges.withLock { $0[name] = keeps }
        return keeps
    }

    // MARK: Writing

    /// Buffers the record, its references and its asset uses: `sendBufferedWrites` sends a batch's saves together.
    func upsert(_ record: Record, isNew: Bool) throws {
        let id = record.recordID
        let fields = try FieldCoding.encode(record.storedFields)
        if fields.utf8.count > StoredColumns.maximumFieldsText {
            throw StoreError(.limitExceeded, "\(id) has \(record.fields.count) fields whose stored form is \(fields.utf8.count) bytes, more than \(StoredColumns.maximumFieldsText); use fewer fields, or move data into an asset.")
        }
        let searchable = try searchableKeys(of: record.recordType)
        let words = searchable.isEmpty ? nil : searchable.compactMap { record.fields[$0]?.stringValue }.flatMap(TextTokens.tokens(of:)).joined(separator: " ")
        struct Link: Hashable { var target: String; var cascade: Bool }
        let links = Set(record.references.map { Link(target: $0.recordID.recordName, cascade: $0.action == .deleteSelf) })
        let hashes = Array(Set(record.assets.compactMap(\.contentHash)))
        buffer.saves.append(PostgresWriteBuffer.Save(
            zone: id.zoneID.zoneName, name: id.recordName, type: record.recordType, fields: fields,
            created: (record.creationDate ?? Date()).timeIntervalSince1970, modified: (record.modificationDate ?? Date()).timeIntervalSince1970,
            creator: record.creatorUserRecordID?.recordName ?? "", modifier: record.lastModifiedUserRecordID?.recordName ?? "",
            tag: record.recordChangeTag ?? "", words: words, isNew: isNew,
            links: links.map { ($0.target, $0.cascade) }, hashes: hashes))
        if !hashes.isEmpty { try sendAssets(hashes) }
        if buffer.isFull { sendBufferedWrites() }
    }

    func remove(_ record: Record) throws {
        var arguments = PostgresArguments()
        let zone = arguments.bind(record.recordID.zoneID.zoneName), name = arguments.bind(record.recordID.recordName)
        if try link.execute("DELETE FROM fatchat.record WHERE zone = \(zone) AND name = \(name)", arguments.binds) > 0 { return }
        // Row-level security hides another role's row from DELETE; a deleteSelf child whose target is gone goes through the checked function.
        try link.execute("SELECT fatchat.remove_orphan(\(zone), \(name))", arguments.binds)
    }

    func removeUndecodable(_ id: RecordID) throws -> String {
        var arguments = PostgresArguments()
        let zone = arguments.bind(id.zoneID.zoneName), name = arguments.bind(id.recordName)
        guard let row = try link.rows("SELECT type FROM fatchat.record WHERE zone = \(zone) AND name = \(name)", arguments.binds).first else { return "" }
        try remove(Record(stored: "", recordID: id, fields: [:]))
        return (try? PostgresColumns(row).text(0, "type")) ?? ""
    }

    func cascadingChildren(of id: RecordID) throws -> [RecordID] {
        var arguments = PostgresArguments()
        let sql = """
            SELECT DISTINCT record.name FROM fatchat.reference JOIN fatchat.record ON record.id = reference.holder
            WHERE reference.zone = \(arguments.bind(id.zoneID.zoneName)) AND reference.target = \(arguments.bind(id.recordName)) AND reference.cascade
            """
        return try link.rows(sql, arguments.binds).map { RecordID(recordName: try PostgresColumns($0).text(0, "name"), zoneID: id.zoneID) }
    }

    func isAssetInUse(_ hash: String) throws -> Bool {
        var arguments = PostgresArguments()
        return try !link.rows("SELECT 1 FROM fatchat.asset_use WHERE hash = \(arguments.bind(hash)) LIMIT 1", arguments.binds).isEmpty
    }

    func createZone(_ name: String, date: Date, keepsChanges: Bool) throws {
        throw StoreError(.invalidArguments, "A public database has only its default zone; custom zones are for the private database.")
    }

    func removeZone(_ name: String) throws {
        throw StoreError(.invalidArguments, "A public database has only its default zone, which cannot be deleted.")
    }

    /// Savepoints of one name nest: PostgreSQL releases or rolls back to the newest of that name.
    /// RELEASE checks what the item sent without waiting.
    func savepoint<T>(_ body: () throws -> T) throws -> T {
        try link.execute("SAVEPOINT item")
        do {
            let result = try body()
            try link.execute("RELEASE SAVEPOINT item")
            return result
        } catch {
            try link.execute("ROLLBACK TO SAVEPOINT item")
            try link.execute("RELEASE SAVEPOINT item")
            // Back at the savepoint the transaction goes on: a statement of the item that failed fails only the item.
            throw (error as? PostgresLink.DeferredFailure)?.error ?? error
        }
    }
}
