import Foundation

/// The cache's writer, which also notes each change this client makes, to append to its log.
///
/// RecordDatabase's logic runs unchanged against the cache; every save
/// becomes a save entry, and every delete of one of this account's records
/// a delete entry. A record of someone else's removed by a cascade gets no
/// entry: only its creator may delete it, and every client cascades by itself.
struct LogRecordingWriter: StorageWriter {
    let base: SQLiteAccess
    let account: String
    let client: UUID
    let clock: HybridClock
    /// What the transaction did, kept outside the writer, which is passed by value; one thread uses it.
    final class Notes {
        var entries: [LogEntry] = []
        var touched: [RecordID] = []
    }
    let notes = Notes()

    private func note(_ entry: LogEntry?, _ id: RecordID) {
        if let entry { notes.entries.append(entry) }
        notes.touched.append(id)
    }

    func upsert(_ record: Record, isNew: Bool) throws {
        guard record.creatorUserRecordID?.recordName == account else {
            throw StoreError(.permissionFailure, "\(record.recordID) was created by \(record.creatorUserRecordID?.recordName ?? "someone else"); only its creator may change it.")
        }
        let saved = try LogReplay.saved(record)
        try base.upsert(record, isNew: isNew)
        note(LogEntry(account: account, client: client, time: clock.next(), recordID: record.recordID, change: .save(saved)), record.recordID)
    }

    func remove(_ record: Record) throws {
        try base.remove(record)
        let own = record.creatorUserRecordID?.recordName == account
        note(own ? LogEntry(account: account, client: client, time: clock.next(), recordID: record.recordID, change: .delete) : nil, record.recordID)
    }

    func removeUndecodable(_ id: RecordID) throws -> String {
        let type = try base.removeUndecodable(id)
        note(nil, id)
        return type
    }

    // Everything else is the cache's own business.
    func record(_ id: RecordID, keys: Set<String>?) throws -> Record? { try base.record(id, keys: keys) }
    func exists(_ id: RecordID) throws -> Bool { try base.exists(id) }
    func lookUp(saving records: [Record], targets: [RecordID]) throws -> SaveLookUp { try base.lookUp(saving: records, targets: targets) }
    func recordIDs(inZone zone: String, afterRow row: Int64, limit: Int) throws -> (ids: [RecordID], lastRow: Int64?) {
        try base.recordIDs(inZone: zone, afterRow: row, limit: limit)
    }
    func zoneNames() throws -> [String] { try base.zoneNames() }
    func zoneKeepsChanges(_ name: String) throws -> Bool? { try base.zoneKeepsChanges(name) }
    func changes(after sequence: Int64, zone: String?, limit: Int) throws -> ChangeScan { try base.changes(after: sequence, zone: zone, limit: limit) }
    func changeBounds() throws -> ChangeBounds { try base.changeBounds() }
    func changesWithBounds(after sequence: Int64, zone: String?, limit: Int) throws -> (bounds: ChangeBounds, scan: ChangeScan?) {
        try base.changesWithBounds(after: sequence, zone: zone, limit: limit)
    }
    func records(matching request: QueryRequest) throws -> [(record: Record?, position: QueryPosition)] { try base.records(matching: request) }
    func countRecords(matching query: Query, zone: String?) throws -> Int { try base.countRecords(matching: query, zone: zone) }
    func fieldMarks(recordType: String) throws -> [String: FieldIndexOptions] { try base.fieldMarks(recordType: recordType) }
    func subscriptionBodies(owner: String) throws -> [(id: String, body: String)] { try base.subscriptionBodies(owner: owner) }
    func recordTypeSummary() throws -> [RecordTypeSummary] { try base.recordTypeSummary() }
    func integrityProblems() throws -> [String] { try base.integrityProblems() }
    func orphanedSubscriptions() throws -> [OrphanedSubscription] { try base.orphanedSubscriptions() }
    func cascadingChildren(of id: RecordID) throws -> [RecordID] { try base.cascadingChildren(of: id) }
    /// Always in use: this cache may not have read yet the record of another client that uses the file,
    /// so no client removes an asset file from a log container (a leak, never a loss).
    func isAssetInUse(_ hash: String) throws -> Bool { true }
    func appendChange(_ id: RecordID, type: String, kind: ChangeRow.Kind, previousFields: [String: FieldValue]?, date: Date) throws {
        try base.appendChange(id, type: type, kind: kind, previousFields: previousFields, date: date)
    }
    func pruneChanges(keeping keep: Int) throws { try base.pruneChanges(keeping: keep) }
    func createZone(_ name: String, date: Date, keepsChanges: Bool) throws { try base.createZone(name, date: date, keepsChanges: keepsChanges) }
    func removeZone(_ name: String) throws { try base.removeZone(name) }
    /// A savepoint rolled back takes its entries with it: they must not reach the log.
    func savepoint<T>(_ body: () throws -> T) throws -> T {
        let entries = notes.entries.count, touched = notes.touched.count
        do {
            return try base.savepoint(body)
        } catch {
            notes.entries.removeLast(notes.entries.count - entries)
            notes.touched.removeLast(notes.touched.count - touched)
            throw error
        }
    }
    func setFieldMark(_ options: FieldIndexOptions, key: String, recordType: String) throws {
        try base.setFieldMark(options, key: key, recordType: recordType)
    }
    func saveSubscription(id: String, owner: String, body: String, parent: Subscription.Parent?) throws {
        try base.saveSubscription(id: id, owner: owner, body: body, parent: parent)
    }
    func deleteSubscription(id: String, owner: String, parent: Subscription.Parent) throws -> Bool {
        try base.deleteSubscription(id: id, owner: owner, parent: parent)
    }
    func deleteSubscriptions(parentedBy ids: [RecordID]) throws { try base.deleteSubscriptions(parentedBy: ids) }
    func deleteSubscription(id: String, owner: String) throws -> Bool { try base.deleteSubscription(id: id, owner: owner) }
    func eraseAll(progress: (ErasureProgress) -> Void) throws -> Set<String> {
        throw StoreError(.permissionFailure, "A log container's public database cannot be erased from one client: every client replays every log.")
    }
}
