import Foundation
import GRDB

/// Applies log entries to the cache with the record rules, so that every client ends with the same records.
///
/// Every entry that arrives is kept in `log_entry`; what a record looks like
/// is then worked out again from all of its entries, in clock order, which
/// makes the outcome independent of the order the logs were read in:
/// - a save makes its account the record's creator if the record has none;
///   from then on only that account's saves and deletes count, and everyone
///   else's are ignored (and counted);
/// - the creator's delete frees the record, which a later save may create again;
/// - one creator's clients are ordered by their hybrid clocks, ties broken by client ID;
/// - a record whose `deleteSelf` target is missing is hidden until the target
///   shows up, and is gone for good once the target is deleted after it was saved,
///   whichever arrives first.
/// The `record` table then holds exactly the shown records, changed through
/// the SQLite engine's own writer, so the change feed and subscriptions see
/// each appearance, update and disappearance once.
struct LogReplay {
    let db: GRDB.Database
    let access: SQLiteAccess

    /// What this poll kept of records that had no entry before it, or nil where the caller's own
    /// transaction already changed the cache (a local write), so that only the stored history is true.
    let arrivals: Arrivals?

    /// `polling`: the entries come from logs, and the cache holds nothing of a record but its stored
    /// entries, so a record seen for the first time can be settled from memory.
    init(_ access: SQLiteAccess, polling: Bool = false) {
        self.init(access, arrivals: polling ? Arrivals() : nil)
    }

    /// A step of a longer catch-up, whose steps share one transaction and what they learnt of it.
    init(_ access: SQLiteAccess, arrivals: Arrivals?) {
        self.access = access
        db = access.db
        self.arrivals = arrivals
    }

    /// The whole history of each record that had none before this poll, in the order it arrived.
    ///
    /// A catch-up is almost all such records. Their entries wait here, not in `log_entry`, until the
    /// record is settled, and are then written once, already marked shown or ignored: reading each one
    /// back only to find the entry just written, and then marking it, was most of a catch-up's writes.
    /// One thread uses it.
    final class Arrivals {
        var histories: [RecordID: [Stored]] = [:]
        /// Records this poll found entries of from before it, which settle from the table.
        var known: Set<RecordID> = []
        /// Whether `log_entry` held no row when this poll (or the catch-up's transaction) began, once looked up.
        var startedEmpty: Bool?
        /// Hashes of the records whose entries arrived since then: while `startedEmpty`, a record whose hash is
        /// not here has no stored entry, so a catch-up's later steps skip a lookup per record (a collision costs one).
        var arrivedHashes: Set<Int> = []
        /// Client IDs as the table spells them; a catch-up has few clients and many entries.
        var clientTexts: [UUID: String] = [:]
        /// A bulk load's change rows, written when it ends (`LogStorage.catchUp`) instead of as each record settles.
        var heldChanges: HeldChanges?

        init(startedEmpty: Bool? = nil) {
            self.startedEmpty = startedEmpty
        }
    }

    /// A client ID as `log_entry` spells it.
    private func text(of client: UUID) -> String {
        guard let arrivals else { return client.uuidString }
        if let known = arrivals.clientTexts[client] { return known }
        let text = client.uuidString
        arrivals.clientTexts[client] = text
        return text
    }

    /// One row of `log_entry`.
    struct Stored {
        var stamp: LogStamp
        var account: String
        var saved: LogEntry.Saved?
        var shown: Bool
        var ignored: Bool
    }

    // MARK: History

    /// Keeps an entry; false if it was kept before (a log read again after compaction, say).
    func remember(_ entry: LogEntry) throws -> Bool {
        let id = entry.recordID
        if let arrivals, !arrivals.known.contains(id) {
            if arrivals.histories[id] == nil, try !isFirstEver(id, arrivals) {
                arrivals.known.insert(id)
            } else {
                // Held in memory until `settle`; the same stamp twice is the same entry, and the first one counts,
                // as `INSERT OR IGNORE` would have it.
                let stamp = entry.stamp
                if arrivals.histories[id]?.contains(where: { $0.stamp == stamp }) == true { return false }
                var saved: LogEntry.Saved?
                if case .save(let value) = entry.change { saved = value }
                arrivals.histories[id, default: []].append(Stored(stamp: stamp, account: entry.account, saved: saved, shown: false, ignored: false))
                return true
            }
        }
        var saved: LogEntry.Saved?
        if case .save(let value) = entry.change { saved = value }
        try insert(id, Stored(stamp: entry.stamp, account: entry.account, saved: saved, shown: false, ignored: false))
        return db.changesCount > 0
    }

    /// Whether the cache holds no entry of `id` from before this poll.
    private func isFirstEver(_ id: RecordID, _ arrivals: Arrivals) throws -> Bool {
        if arrivals.startedEmpty == nil {
            arrivals.startedEmpty = try !(Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM log_entry)")) ?? true)
        }
        if arrivals.startedEmpty == true, arrivals.arrivedHashes.insert(id.hashValue).inserted { return true }
        return try !(Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM log_entry WHERE zone = ? AND name = ?)"),
                                   arguments: [id.zoneID.zoneName, id.recordName]) ?? true)
    }

    /// Writes one row of `log_entry`, unless a row of that stamp is there.
    private func insert(_ id: RecordID, _ entry: Stored) throws {
        var arguments: StatementArguments = [id.zoneID.zoneName, id.recordName, Int64(bitPattern: entry.stamp.time.rawValue),
                                             text(of: entry.stamp.client), entry.account]
        if let saved = entry.saved {
            arguments += [LogFormat.Kind.save.rawValue, saved.recordType, saved.fields, saved.created, saved.modified, saved.changeTag]
        } else {
            arguments += [LogFormat.Kind.delete.rawValue, nil, nil, nil, nil, nil]
        }
        arguments += [entry.shown, entry.ignored]
        try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO log_entry (zone, name, time, client, account, kind, type, fields, created, modified, tag, shown, ignored)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: arguments)
    }

    /// A record's entries in clock order, from this poll's memory while it holds them, else from the table.
    private func latestHistory(of id: RecordID) throws -> [Stored] {
        if let arrived = arrivals?.histories[id] { return arrived.sorted { $0.stamp < $1.stamp } }
        return try history(of: id)
    }

    /// A record's entries in clock order; a row that does not read back is left out.
    func history(of id: RecordID) throws -> [Stored] {
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT time, client, account, kind, type, fields, created, modified, tag, shown, ignored
            FROM log_entry WHERE zone = ? AND name = ? ORDER BY time, client
            """), arguments: [id.zoneID.zoneName, id.recordName])
        var entries: [Stored] = []
        while let row = try rows.next() {
            guard let time = Int64.fromDatabaseValue(row[0]), time >= 0,
                  let clientText = String.fromDatabaseValue(row[1]), let client = UUID(uuidString: clientText),
                  let account = String.fromDatabaseValue(row[2]), let kind = Int64.fromDatabaseValue(row[3]) else { continue }
            var saved: LogEntry.Saved?
            if kind == Int64(LogFormat.Kind.save.rawValue) {
                guard let type = String.fromDatabaseValue(row[4]), let fields = String.fromDatabaseValue(row[5]),
                      let created = Double.fromDatabaseValue(row[6]), let modified = Double.fromDatabaseValue(row[7]),
                      let tag = String.fromDatabaseValue(row[8]) else { continue }
                saved = LogEntry.Saved(recordType: type, fields: fields, created: created, modified: modified, changeTag: tag)
            }
            entries.append(Stored(stamp: LogStamp(time: HybridTime(rawValue: UInt64(time)), client: client), account: account,
                                  saved: saved, shown: Int64.fromDatabaseValue(row[9]) == 1, ignored: Int64.fromDatabaseValue(row[10]) == 1))
        }
        return entries
    }

    // MARK: The rules

    /// What a record's history comes to.
    struct Outcome {
        /// The save that holds, if the record exists.
        var live: Stored?
        /// The clock of the creator's last delete, if there was one.
        var lastDelete: HybridTime?
        /// The entries that did not count, being someone else's than the creator's.
        var ignored: Set<LogStamp> = []
    }

    /// Runs the record rules over a history in clock order.
    static func fold(_ history: [Stored]) -> Outcome {
        var outcome = Outcome()
        var creator: String?
        for entry in history {
            if entry.saved != nil {
                if creator == nil || creator == entry.account {
                    creator = entry.account
                    outcome.live = entry
                } else {
                    outcome.ignored.insert(entry.stamp)
                }
            } else if creator == entry.account {
                creator = nil
                outcome.live = nil
                outcome.lastDelete = entry.stamp.time
            } else {
                outcome.ignored.insert(entry.stamp)
            }
        }
        return outcome
    }

    // MARK: Showing records

    /// Works out again what each of these records, and any record that depends on them, should look like.
    ///
    /// Returns the records that appeared, changed or went. `ids` come in the order their entries
    /// arrived, so that a channel saved before its messages settles first and they need not wait
    /// for it and be settled twice.
    @discardableResult
    func settle(_ ids: some Collection<RecordID>, historyLimit: Int) throws -> Int {
        var queue = Array(Array(ids).reversed())
        var queued = Set(ids)
        var pass = Pass()
        var changed = 0
        // Each step follows a `deleteSelf` link; a cycle of links can only flip a record
        // a bounded number of times, and this bound ends even a pathological one.
        var budget = ids.count * 8 + 10_000
        while let id = queue.popLast(), budget > 0 {
            budget -= 1
            queued.remove(id)
            let (result, deleteMoved) = try show(id, pass: &pass)
            if result != .unchanged { changed += 1 }
            // A holder depends on its target's presence and its last delete, not on its fields:
            // a channel's new topic leaves its messages alone.
            var next: [RecordID] = []
            if result == .appeared || deleteMoved { next += try waitingHolders(of: id, pass: &pass) }
            if result == .disappeared || deleteMoved { next += try access.cascadingChildren(of: id) }
            for holder in next where queued.insert(holder).inserted { queue.append(holder) }
        }
        // Records the budget did not reach keep their entries all the same, as nothing of them shows.
        if let arrivals {
            for (id, entries) in arrivals.histories {
                for entry in entries { try insert(id, entry) }
            }
            arrivals.histories = [:]
        }
        if changed > 0, arrivals?.heldChanges == nil { try access.pruneChanges(keeping: historyLimit) }
        return changed
    }

    enum Shown { case unchanged, appeared, replaced, disappeared }

    /// What one `settle` has learnt so far, so a channel's thousand new messages look it up once.
    struct Pass {
        var deletes: [RecordID: HybridTime?] = [:]
        var present: [RecordID: Bool] = [:]
        var zoneKeepsChanges: [String: Bool] = [:]
        /// Whether `log_waiting` may hold a row, once looked up: while it holds none, a record that
        /// appears releases nobody, and a catch-up skips a lookup per record.
        var mayWait: Bool?
        /// Each record type's searchable keys, looked up once.
        var searchableKeys: [String: [String]] = [:]
    }

    /// Makes the `record` table hold what the rules say of one record; also tells whether its last delete moved.
    private func show(_ id: RecordID, pass: inout Pass) throws -> (Shown, deleteMoved: Bool) {
        // A record whose every entry arrived in this poll has no stored delete, shown row or wait
        // to undo; it is taken from memory once, and read back like any other if it is settled again.
        let entries: [Stored]
        let fresh: Bool
        if let arrived = arrivals?.histories.removeValue(forKey: id) {
            entries = arrived.sorted { $0.stamp < $1.stamp }
            fresh = true
        } else {
            entries = try history(of: id)
            fresh = false
        }
        let outcome = Self.fold(entries)
        // `pass.deletes` and `pass.present` remember what was looked up of a record (a channel its messages
        // name), and are kept true for those; one that nothing looked up is read from the cache if asked.
        if outcome.lastDelete != nil || pass.deletes.keys.contains(id) { pass.deletes[id] = outcome.lastDelete }
        let deleteMoved = fresh && outcome.lastDelete == nil ? false : try recordLastDelete(id, outcome.lastDelete)
        let shown = try show(id, entries: entries, outcome: outcome, fresh: fresh, pass: &pass)
        if pass.present.keys.contains(id) {
            switch shown {
            case .appeared, .replaced: pass.present[id] = true
            case .disappeared: pass.present[id] = false
            case .unchanged: break
            }
        }
        return (shown, deleteMoved)
    }

    private func isPresent(_ id: RecordID, pass: inout Pass) throws -> Bool {
        if let known = pass.present[id] { return known }
        let present = try access.exists(id)
        pass.present[id] = present
        return present
    }

    /// Keeps the clock of a record's last delete; returns whether it changed.
    private func recordLastDelete(_ id: RecordID, _ time: HybridTime?) throws -> Bool {
        let stored = try Int64.fetchOne(db.cachedStatement(sql: "SELECT time FROM log_deleted WHERE zone = ? AND name = ?"),
                                        arguments: [id.zoneID.zoneName, id.recordName])
        let now = time.map { Int64(bitPattern: $0.rawValue) }
        guard stored != now else { return false }
        if let now {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO log_deleted (zone, name, time) VALUES (?, ?, ?)")
                .execute(arguments: [id.zoneID.zoneName, id.recordName, now])
        } else {
            try db.cachedStatement(sql: "DELETE FROM log_deleted WHERE zone = ? AND name = ?").execute(arguments: [id.zoneID.zoneName, id.recordName])
        }
        return true
    }

    private func show(_ id: RecordID, entries: [Stored], outcome: Outcome, fresh: Bool, pass: inout Pass) throws -> Shown {
        if !fresh {
            for entry in entries where outcome.ignored.contains(entry.stamp) != entry.ignored {
                try db.cachedStatement(sql: "UPDATE log_entry SET ignored = ? WHERE zone = ? AND name = ? AND time = ? AND client = ?")
                    .execute(arguments: [!entry.ignored, id.zoneID.zoneName, id.recordName,
                                         Int64(bitPattern: entry.stamp.time.rawValue), entry.stamp.client.uuidString])
            }
            try db.cachedStatement(sql: "DELETE FROM log_waiting WHERE zone = ? AND holder = ?").execute(arguments: [id.zoneID.zoneName, id.recordName])
        }

        var desired: (entry: Stored, record: Record)?
        if let live = outcome.live, let saved = live.saved, let record = try? Self.record(id, saved, account: live.account, assets: access.assets) {
            desired = (live, record)
            for reference in record.references where reference.action == .deleteSelf {
                let target = reference.recordID
                let deleted: HybridTime?
                if let known = pass.deletes[target] {
                    deleted = known
                } else {
                    deleted = Self.fold(try latestHistory(of: target)).lastDelete
                    pass.deletes[target] = deleted
                }
                let deletedSince = deleted.map { $0 > live.stamp.time } ?? false
                if try deletedSince || !isPresent(target, pass: &pass) {
                    // Hidden for now; looked at again whenever the target appears or its last delete moves.
                    try db.cachedStatement(sql: "INSERT OR IGNORE INTO log_waiting (zone, target, holder) VALUES (?, ?, ?)")
                        .execute(arguments: [id.zoneID.zoneName, target.recordName, id.recordName])
                    pass.mayWait = true
                    desired = nil
                }
            }
        }

        if fresh {
            // Written once, marked as this settle leaves them: the desired save is shown below, or nothing is.
            for var entry in entries {
                entry.shown = entry.stamp == desired?.entry.stamp
                entry.ignored = outcome.ignored.contains(entry.stamp)
                try insert(id, entry)
            }
        }

        let current = fresh ? nil : entries.first(where: \.shown)?.stamp
        let present = fresh ? false : try isPresent(id, pass: &pass)
        if current == desired?.entry.stamp, present == (desired != nil) { return .unchanged }
        if let current {
            try db.cachedStatement(sql: "UPDATE log_entry SET shown = 0 WHERE zone = ? AND name = ? AND time = ? AND client = ?")
                .execute(arguments: [id.zoneID.zoneName, id.recordName, Int64(bitPattern: current.time.rawValue), current.client.uuidString])
        }
        var previous: Record?
        if present {
            do {
                previous = try access.record(id, keys: nil)
            } catch is DamagedRow {
                _ = try access.removeUndecodable(id)
            }
        }
        let keepsChanges = try pass.zoneKeepsChanges[id.zoneID.zoneName] ?? access.zoneKeepsChanges(id.zoneID.zoneName) ?? false
        pass.zoneKeepsChanges[id.zoneID.zoneName] = keepsChanges
        guard let desired else {
            guard let previous else { return .unchanged }
            try access.remove(previous)
            if keepsChanges { try appendChange(id, type: previous.recordType, kind: .deleted, previousFields: previous.fields) }
            try access.deleteSubscriptions(parentedBy: [id])
            return .disappeared
        }
        // The `record` table keeps a row's creator and creation date on update; a record created
        // again, or by someone else whose claim turned out to be earlier, replaces the row.
        if let previous, previous.creatorUserRecordID != desired.record.creatorUserRecordID || previous.creationDate != desired.record.creationDate {
            try access.remove(previous)
        }
        let type = desired.record.recordType
        let keys = try pass.searchableKeys[type] ?? access.searchableKeys(of: type)
        pass.searchableKeys[type] = keys
        try access.upsert(desired.record, isNew: present ? !(try access.exists(id)) : true, searchableKeys: keys)
        if !fresh {
            try db.cachedStatement(sql: "UPDATE log_entry SET shown = 1 WHERE zone = ? AND name = ? AND time = ? AND client = ?")
                .execute(arguments: [id.zoneID.zoneName, id.recordName, Int64(bitPattern: desired.entry.stamp.time.rawValue),
                                     desired.entry.stamp.client.uuidString])
        }
        if keepsChanges {
            try appendChange(id, type: desired.record.recordType, kind: previous == nil ? .created : .updated, previousFields: previous?.fields)
        }
        return previous == nil ? .appeared : .replaced
    }

    /// Writes a change row, or holds it back when a bulk load does.
    private func appendChange(_ id: RecordID, type: String, kind: ChangeRow.Kind, previousFields: [String: FieldValue]?) throws {
        let date = Date()
        if let arrivals, arrivals.heldChanges != nil {
            arrivals.heldChanges?.append(HeldChanges.Change(id: id, type: type, kind: kind, previousFields: previousFields, date: date))
        } else {
            try access.appendChange(id, type: type, kind: kind, previousFields: previousFields, date: date)
        }
    }

    /// The records hidden until `target` shows up.
    private func waitingHolders(of target: RecordID, pass: inout Pass) throws -> [RecordID] {
        if pass.mayWait == nil {
            pass.mayWait = try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM log_waiting)")) ?? true
        }
        guard pass.mayWait == true else { return [] }
        return try String.fetchAll(db.cachedStatement(sql: "SELECT holder FROM log_waiting WHERE zone = ? AND target = ?"),
                            arguments: [target.zoneID.zoneName, target.recordName])
            .map { RecordID(recordName: $0, zoneID: target.zoneID) }
    }

    /// The record a save entry describes, as the `record` table will hold it; throws if its fields do not decode.
    static func record(_ id: RecordID, _ saved: LogEntry.Saved, account: String, assets: URL) throws -> Record {
        let fields = try FieldCoding.decode(saved.fields, zone: id.zoneID, assetsDirectory: assets)
        var record = Record(stored: saved.recordType, recordID: id, fields: fields)
        guard record.storageSize <= Record.maximumSize else {
            throw StoreError(.limitExceeded, "\(id) is larger than a record may be.")
        }
        record.creationDate = Date(timeIntervalSince1970: saved.created)
        record.modificationDate = Date(timeIntervalSince1970: saved.modified)
        record.creatorUserRecordID = RecordID(recordName: account)
        record.lastModifiedUserRecordID = RecordID(recordName: account)
        record.recordChangeTag = saved.changeTag
        return record
    }

    /// The saved form of a record that this client stores, for its own log.
    static func saved(_ record: Record) throws -> LogEntry.Saved {
        LogEntry.Saved(recordType: record.recordType, fields: try FieldCoding.encode(record.storedFields),
                       created: (record.creationDate ?? Date()).timeIntervalSince1970,
                       modified: (record.modificationDate ?? Date()).timeIntervalSince1970,
                       changeTag: record.recordChangeTag ?? "")
    }
}
