import Foundation

extension RecordDatabase {
    /// Keys that name system fields; a record cannot use them for its own fields.
    static let systemFieldKeys: Set<String> = [
        "recordID", "recordType", "creationDate", "creatorUserRecordID",
        "modificationDate", "lastModifiedUserRecordID", "recordChangeTag", RecordSignature.fieldKey,
    ]

    /// Saves and deletes records in one operation, with a result for each item.
    ///
    /// In a custom zone the batch is atomic: one failure fails everything, and
    /// the other items get `batchRequestFailed`. Elsewhere each item stands on
    /// its own. `deletingOnlyIfUnchanged` makes a delete conditional on the
    /// record's change tag (`serverRecordChanged` otherwise), checked inside the
    /// transaction. The operation itself throws only for what affects all items:
    /// more than 400 items, the same record twice, or an unavailable database.
    public func modifyRecords(
        saving records: [Record],
        deleting recordIDs: [RecordID],
        savePolicy: SavePolicy = .ifServerRecordUnchanged,
        atomically: Bool? = nil,
        deletingOnlyIfUnchanged expectedTags: [RecordID: String] = [:]
    ) throws -> ModifyResult {
        let total = records.count + recordIDs.count
        guard total <= Self.maximumBatchSize else {
            throw StoreError(.limitExceeded, "The operation has \(total) items; one operation takes at most \(Self.maximumBatchSize). Split it into batches.")
        }
        let allIDs = records.map(\.recordID) + recordIDs
        if Set(allIDs).count != allIDs.count {
            throw StoreError(.invalidArguments, "The same record appears more than once in one operation; send each record once.")
        }
        let atomic = atomically ?? (scope == .private && !allIDs.isEmpty && allIDs.allSatisfy { !$0.zoneID.isDefault })

        var result = ModifyResult()
        var sources: [String: URL] = [:]
        var checked: [Record] = []
        var early: [RecordID: StoreError] = [:]
        for record in records {
            do {
                checked.append(try prepare(record, sources: &sources))
            } catch let error as StoreError {
                early[record.recordID] = error
            }
        }
        for id in recordIDs {
            do { try checkZone(id.zoneID) } catch let error as StoreError { early[id] = error }
        }
        if atomic, !early.isEmpty {
            return Self.failedAtomically(records: records, deleting: recordIDs, errors: early)
        }
        for (id, error) in early {
            if records.contains(where: { $0.recordID == id }) { result.saveResults[id] = .failure(error) } else { result.deleteResults[id] = .failure(error) }
        }

        // In a non-atomic batch an item fails alone. Its checks all come before its first
        // write, so a failed check leaves nothing to undo; only a save that also places
        // assets (which can fail after the row is written) runs in a savepoint, as each
        // savepoint costs two statements. An atomic batch, or a single item, rolls back
        // whole; so does a batch whose item fails while writing (an I/O error, say).
        let isolateItems = !atomic && total > 1
        let saving = Self.referencedFirst(checked)
        let savingIDs = Set(saving.map(\.recordID))
        // New records are signed, as a signature costs more than the writes of a message. A few are
        // signed before the lock is taken. A batch is signed on the other cores while its first
        // records are written: on two cores, signing all first and then writing took a seed a fifth longer
        // (BENCHMARKS.md, twentieth round). A record whose signing fails fails as its item.
        let signed = OnAllCores.ahead(saving) { [self] record in Result { try presigned(record) } }
        defer { signed.stop() }
        let deleting = recordIDs.filter { early[$0] == nil }
        // Saves that can only create, such as new messages: an engine may guess what a look-up would find.
        // Not with assets, whose content an engine may send between a batch's saves.
        let onlyCreates = savePolicy == .ifServerRecordUnchanged && deleting.isEmpty
            && saving.allSatisfy { $0.recordChangeTag == nil && $0.assets.isEmpty }
        do {
            return try storage.write { writer in
                var outcome = result
                var write = BatchWrite(writer: writer, now: Date(), batch: savingIDs, sources: sources)
                try write.lookUp(saving, guessing: onlyCreates)
                func item<T>(_ id: RecordID, savepoint: Bool = false, _ body: () throws -> T) throws -> Result<T, StoreError> {
                    let undoable = isolateItems && savepoint
                    write.itemWrote = false
                    do {
                        return .success(undoable ? try writer.savepoint(body) : try body())
                    } catch {
                        // A stored record that does not decode fails its item like any other error of the item.
                        guard let failure = (error as? StoreError) ?? (error as? DamagedRow)?.storeError else { throw error }
                        if !isolateItems || (write.itemWrote && !undoable) { throw AtomicFailure(recordID: id, error: failure) }
                        return .failure(failure)
                    }
                }
                for (index, record) in saving.enumerated() {
                    outcome.saveResults[record.recordID] = try item(record.recordID, savepoint: !record.assets.isEmpty) {
                        try saveOne(try signed.output(index).get(), policy: savePolicy, in: &write)
                    }
                }
                for id in deleting {
                    let deleted = try item(id) {
                        try deleteOne(id, expectedTag: expectedTags[id], in: &write)
                    }
                    outcome.deleteResults[id] = deleted.map { _ in () }
                    if case .success(let cascaded) = deleted { outcome.cascadedDeletions += cascaded }
                }
                // Subscriptions go with their parent records, every owner's, in this same transaction.
                try writer.deleteSubscriptions(parentedBy: write.removed)
                try assets.collect(write.orphanedAssets, using: writer)
                if write.loggedChanges { try writer.pruneChanges(keeping: historyLimit) }
                return outcome
            }
        } catch let failure as AtomicFailure {
            // A lost connection or a busy database fails the whole operation, as it would have outside any item:
            // the caller tries it all again, rather than taking every other item for failed.
            if failure.error.isTransient { throw failure.error }
            return Self.failedAtomically(records: records, deleting: recordIDs, errors: [failure.recordID: failure.error])
        }
    }

    /// What the items of one operation share inside its transaction.
    private struct BatchWrite {
        let writer: any StorageWriter
        let now: Date
        /// The records saved by the operation, which references may point to.
        let batch: Set<RecordID>
        /// Where ingested assets came from, by content hash.
        let sources: [String: URL]
        var orphanedAssets: Set<String> = []
        /// The records the operation deleted, cascades included.
        var removed: [RecordID] = []
        /// Whether anything went into the change log, which then may need pruning.
        private(set) var loggedChanges = false
        /// Whether the current item has begun writing: past its checks, a failure can no longer stand alone.
        var itemWrote = false
        /// Zones looked up so far: whether each keeps a change log, `nil` for no such zone.
        private var zones: [String: Bool?] = [:]
        /// Reference targets found to exist: a batch of messages to one channel looks it up once.
        /// Only saves consult it, and they run before the batch's deletes, so a target stays.
        private var existing: Set<RecordID> = []

        init(writer: any StorageWriter, now: Date, batch: Set<RecordID>, sources: [String: URL]) {
            self.writer = writer
            self.now = now
            self.batch = batch
            self.sources = sources
        }

        /// Whether the zone keeps a change log; `zoneNotFound` if there is no such zone.
        mutating func keepsChanges(_ zone: ZoneID) throws -> Bool {
            let known = try zones[zone.zoneName] ?? writer.zoneKeepsChanges(zone.zoneName)
            zones[zone.zoneName] = .some(known)
            guard let known else {
                throw StoreError(.zoneNotFound, "The zone '\(zone.zoneName)' does not exist; create it before saving records into it.")
            }
            return known
        }

        /// Saved records as the engine looked them up before the first save (`nil` inside: none is stored).
        /// Only each record's own save changes it, so the look-up holds until that save takes it.
        var lookedUp: [RecordID: Record?] = [:]

        /// Looks up in one go what the saves will ask for, where the engine answers faster so; with
        /// `guessing`, the engine may take it that nothing is stored and every target exists.
        mutating func lookUp(_ saving: [Record], guessing: Bool) throws {
            let targets = Array(Set(saving.flatMap { $0.references.map(\.recordID) }).subtracting(batch))
            let found = try (guessing ? writer.guessLookUp(saving: saving, targets: targets) : nil) ?? writer.lookUp(saving: saving, targets: targets)
            lookedUp = found.stored
            existing.formUnion(found.existing)
        }

        /// Whether a record exists, remembering the ones that do.
        mutating func exists(_ id: RecordID) throws -> Bool {
            if existing.contains(id) { return true }
            guard try writer.exists(id) else { return false }
            existing.insert(id)
            return true
        }

        /// Appends to the change log, unless the record's zone keeps none.
        mutating func logChange(_ id: RecordID, type: String, kind: ChangeRow.Kind, previousFields: [String: FieldValue]?) throws {
            guard try keepsChanges(id.zoneID) else { return }
            try writer.appendChange(id, type: type, kind: kind, previousFields: previousFields, date: now)
            loggedChanges = true
        }
    }

    /// Thrown inside the transaction to roll an atomic batch back.
    private struct AtomicFailure: Error {
        var recordID: RecordID
        var error: StoreError
    }

    private static func failedAtomically(records: [Record], deleting ids: [RecordID], errors: [RecordID: StoreError]) -> ModifyResult {
        var result = ModifyResult()
        func outcome(_ id: RecordID) -> StoreError {
            errors[id] ?? StoreError(.batchRequestFailed, "\(id) was not saved because another item of the same atomic batch failed.")
        }
        for record in records { result.saveResults[record.recordID] = .failure(outcome(record.recordID)) }
        for id in ids { result.deleteResults[id] = .failure(outcome(id)) }
        return result
    }

    /// Orders saves so that records referenced by others in the batch come first.
    private static func referencedFirst(_ records: [Record]) -> [Record] {
        let targets = Set(records.flatMap { $0.references.map(\.recordID) })
        return records.filter { targets.contains($0.recordID) } + records.filter { !targets.contains($0.recordID) }
    }

    func checkZone(_ zone: ZoneID) throws {
        if scope == .public, !zone.isDefault {
            throw StoreError(.zoneNotFound, "The public database has only the default zone, not '\(zone.zoneName)'; custom zones exist in private databases.")
        }
    }

    /// Checks what can be checked before taking the lock, and copies assets in; `presigned` comes next.
    private func prepare(_ record: Record, sources: inout [String: URL]) throws -> Record {
        try Identifier.checkRecordType(record.recordType)
        try checkZone(record.recordID.zoneID)
        if record.recordID.recordName.isEmpty || record.recordID.recordName.utf8.count > 255 {
            throw StoreError(.invalidArguments, "A record name must have 1 to 255 bytes.")
        }
        // The store signs; a signature the caller's copy brings (a fetched copy's, say) is never kept.
        var record = record
        record.signature = nil
        for key in record.fields.keys {
            try Identifier.checkFieldKey(key)
            if Self.systemFieldKeys.contains(key) {
                throw StoreError(.invalidArguments, "'\(key)' is a system field; choose another key for \(record.recordType).")
            }
        }
        for reference in record.references where reference.recordID.zoneID.zoneName != record.recordID.zoneID.zoneName {
            throw StoreError(.invalidArguments, "\(record.recordID) refers to \(reference.recordID) in zone '\(reference.recordID.zoneID.zoneName)'; a reference must stay within its record's zone.")
        }
        try checkSize(record)
        return record.assets.isEmpty ? record : try ingestAssets(of: record, sources: &sources)
    }

    /// Signs a new record before the write lock is taken, as its creator and replacing nothing: `saveOne`
    /// keeps this signature when the record turns out to be new, and signs again, inside the lock, only an update.
    /// A record this database replaced lately will most likely be an update again, so it is left to `saveOne`.
    private func presigned(_ record: Record) throws -> Record {
        guard scope == .public, let signer, record.recordChangeTag == nil else { return record }
        if replacedLately.withLock({ $0.contains(record.recordID) }) {
            var unsigned = record
            unsigned.signature = nil
            return unsigned
        }
        let fields = RecordSignature.settled(record.fields)
        let message = try RecordSignature.message(type: record.recordType, id: record.recordID, creator: user.recordID.recordName,
                                                  replacing: nil, fields: fields)
        var copy = record
        copy.replaceFields(fields)
        copy.signature = RecordSignature.fieldValue(signature: try signer.sign(message), replacing: nil)
        return copy
    }

    /// Signs the version `record` will be stored as: by `creator`, replacing the version tagged `replacing`.
    private func sign(_ record: inout Record, creator: String, replacing: String?) throws {
        guard scope == .public, let signer else { return }
        let settled = RecordSignature.settled(record.fields)
        let message = try RecordSignature.message(type: record.recordType, id: record.recordID, creator: creator, replacing: replacing, fields: settled)
        record.replaceFields(settled)
        record.signature = RecordSignature.fieldValue(signature: try signer.sign(message), replacing: replacing)
    }

    /// Copies the record's assets into the store and points its fields at the stored copies.
    private func ingestAssets(of record: Record, sources: inout [String: URL]) throws -> Record {
        var fields = record.fields
        for (key, value) in record.fields {
            switch value {
            case .asset(let asset):
                fields[key] = .asset(try ingest(asset, sources: &sources))
            case .list(let items) where items.contains(where: { $0.assetValue != nil }):
                fields[key] = .list(try items.map { item in
                    guard let asset = item.assetValue else { return item }
                    return .asset(try ingest(asset, sources: &sources))
                })
            default:
                break
            }
        }
        var copy = record
        copy.replaceFields(fields)
        return copy
    }

    private func ingest(_ asset: Asset, sources: inout [String: URL]) throws -> Asset {
        if let hash = asset.contentHash, asset.fileURL == assets.url(for: hash) {
            return asset
        }
        let stored = try assets.ingest(asset)
        if let hash = stored.contentHash { sources[hash] = asset.fileURL }
        return stored
    }

    private func checkSize(_ record: Record) throws {
        let size = record.storageSize
        if size > Record.maximumSize {
            throw StoreError(.limitExceeded, "\(record.recordID) is \(size) bytes; a record holds at most \(Record.maximumSize) bytes, not counting assets. Move large data into an asset.")
        }
    }

    private func saveOne(_ record: Record, policy: SavePolicy, in write: inout BatchWrite) throws -> Record {
        let id = record.recordID
        let writer = write.writer, now = write.now
        _ = try write.keepsChanges(id.zoneID)
        let existing = try write.lookedUp.removeValue(forKey: id) ?? writer.record(id, keys: nil)
        var fields = record.fields
        if let existing {
            if scope == .public, existing.creatorUserRecordID != user.recordID {
                throw StoreError(.permissionFailure, "\(id) was created by \(existing.creatorUserRecordID?.recordName ?? "someone else"); only its creator may change it.")
            }
            if existing.recordType != record.recordType {
                throw StoreError(.invalidArguments, "\(id) is a \(existing.recordType), not a \(record.recordType); a record cannot change its type.")
            }
            switch policy {
            case .ifServerRecordUnchanged:
                guard record.recordChangeTag == existing.recordChangeTag else {
                    var error = StoreError(.serverRecordChanged, "\(id) was changed by someone else since this copy was fetched; merge with the server record and save again.")
                    error.clientRecord = record
                    error.serverRecord = existing
                    error.ancestorRecord = record.ancestor
                    throw error
                }
                fields = merged(record, over: existing.fields, keys: record.isPartial ? nil : Set(record.fields.keys).union(record.changedKeys), replaceAll: !record.isPartial)
            case .changedKeys:
                fields = merged(record, over: existing.fields, keys: record.changedKeys, replaceAll: false)
            case .allKeys:
                fields = merged(record, over: existing.fields, keys: nil, replaceAll: !record.isPartial)
            }
        } else if policy == .ifServerRecordUnchanged, record.recordChangeTag != nil {
            throw StoreError(.unknownItem, "\(id) was deleted since this copy was fetched.")
        }

        var stored = record
        stored.replaceFields(fields)
        if scope == .public, signer != nil, existing != nil || record.recordChangeTag != nil || record.signature == nil {
            // Not the new record `prepare` signed: sign the version being stored, under the lock.
            try sign(&stored, creator: existing?.creatorUserRecordID?.recordName ?? user.recordID.recordName, replacing: existing?.recordChangeTag)
        }
        try checkSize(stored)
        for reference in stored.references where !write.batch.contains(reference.recordID) {
            guard try write.exists(reference.recordID) else {
                throw StoreError(.referenceViolation, "\(id) refers to \(reference.recordID), which does not exist.")
            }
        }
        stored.creationDate = existing?.creationDate ?? now
        stored.creatorUserRecordID = existing?.creatorUserRecordID ?? user.recordID
        stored.modificationDate = now
        stored.lastModifiedUserRecordID = user.recordID
        stored.recordChangeTag = Self.newChangeTag()
        stored.loadedKeys = nil
        write.itemWrote = true
        try writer.upsert(stored, isNew: existing == nil)
        // Hand back the dates exactly as a later fetch will decode them.
        let storedNow = Date(timeIntervalSince1970: now.timeIntervalSince1970)
        stored.modificationDate = storedNow
        stored.creationDate = existing?.creationDate ?? storedNow
        try write.logChange(id, type: stored.recordType, kind: existing == nil ? .created : .updated, previousFields: existing?.fields)
        for asset in stored.assets {
            guard let hash = asset.contentHash else { continue }
            try assets.place(hash: hash, from: write.sources[hash] ?? asset.fileURL)
        }
        if existing != nil, scope == .public, signer != nil {
            replacedLately.withLock { ids in
                if ids.count >= Self.replacedLatelyLimit { ids.removeAll(keepingCapacity: true) }
                ids.insert(id)
            }
        }
        if let existing {
            write.orphanedAssets.formUnion(Set(existing.assets.compactMap(\.contentHash)).subtracting(stored.assets.compactMap(\.contentHash)))
        }
        stored.markSaved()
        return stored
    }

    /// The fields to store: `record`'s values for `keys` (all of its keys when nil) over `stored`.
    private func merged(_ record: Record, over stored: [String: FieldValue], keys: Set<String>?, replaceAll: Bool) -> [String: FieldValue] {
        if replaceAll { return record.fields }
        var fields = stored
        for key in keys ?? Set(record.fields.keys).union(record.changedKeys) {
            fields[key] = record.fields[key]
        }
        return fields
    }

    /// Deletes a record and, recursively, the records that hold `deleteSelf` references to it.
    private func deleteOne(_ id: RecordID, expectedTag: String?, in write: inout BatchWrite) throws -> [RecordID] {
        let writer = write.writer
        guard let root = try writer.record(id, keys: nil) else {
            throw StoreError(.unknownItem, "There is no record \(id) to delete.")
        }
        if let expectedTag, root.recordChangeTag != expectedTag {
            var error = StoreError(.serverRecordChanged, "\(id) changed since it was fetched; it was not deleted.")
            error.serverRecord = root
            throw error
        }
        if scope == .public, root.creatorUserRecordID != user.recordID {
            throw StoreError(.permissionFailure, "\(id) was created by \(root.creatorUserRecordID?.recordName ?? "someone else"); only its creator may delete it.")
        }
        var doomed = [id]
        var seen: Set<RecordID> = [id]
        var index = 0
        while index < doomed.count {
            for child in try writer.cascadingChildren(of: doomed[index]) where seen.insert(child).inserted {
                doomed.append(child)
            }
            index += 1
        }
        write.itemWrote = true
        for target in doomed {
            let child: Record?
            do {
                child = target == id ? root : try writer.record(target, keys: nil)
            } catch is DamagedRow {
                // A child that does not decode (someone wrote it by hand) goes with its parent all the same.
                try write.logChange(target, type: try writer.removeUndecodable(target), kind: .deleted, previousFields: nil)
                continue
            }
            guard let removed = child else { continue }
            try writer.remove(removed)
            write.removed.append(target)
            try write.logChange(target, type: removed.recordType, kind: .deleted, previousFields: removed.fields)
            write.orphanedAssets.formUnion(removed.assets.compactMap(\.contentHash))
        }
        return Array(doomed.dropFirst())
    }

    static func newChangeTag() -> String {
        String(UInt64.random(in: 1...UInt64.max), radix: 36)
    }
}
