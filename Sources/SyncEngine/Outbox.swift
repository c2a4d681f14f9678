import Foundation
import Synchronization
import RecordStore

/// The state of one outgoing change, as the app can see it.
public enum OutboxState: Sendable, Equatable {
    /// Waiting to be sent, or being retried after a transient failure.
    case pending
    /// Failed for good; kept until the app retries or discards it.
    case failed(code: StoreError.Code, message: String)
    /// Not in the outbox: it was sent (or never queued).
    case sent
}

/// One outgoing change in the outbox.
public struct OutboxEntry: Sendable {
    public enum Operation: String, Sendable {
        case save, delete
        /// Saves or deletes one of the owner's subscriptions.
        case subscribe, unsubscribe
    }

    public var recordID: RecordID
    public var recordType: String
    public var operation: Operation
    public var state: OutboxState
    /// The record to save, as the app handed it over; `nil` for a delete.
    public var record: Record?
    /// How the save treats a stored copy: conflicts by change tag, or only the keys it sets.
    public var savePolicy: SavePolicy = .ifServerRecordUnchanged
    /// A save that only creates: a record of that ID made by anyone meanwhile counts as sent.
    public var createsOnly = false
    /// The subscription to save, for `subscribe`.
    public var subscription: Subscription?
    /// The outbox record is damaged: the entry holds no record or subscription, its state is `failed`
    /// with what is wrong, and the sender marks it so without sending it. An unreadable operation shows as `save`.
    /// A flag rather than the error itself, which holds three records: the sender copies entries around.
    var isUnreadable = false
    /// The outbox record as it was read; its change tag tells whether the entry was replaced since.
    var item: Record
    /// Orders entries: earlier first.
    var order: Int64 { item["order"]?.int64Value ?? 0 }

    /// What is wrong with a damaged outbox record; `nil` for one that reads.
    var unreadable: StoreError? {
        guard isUnreadable, case .failed(let code, let message) = state else { return nil }
        return StoreError(code, message)
    }
}

/// One change to queue for the public database.
public enum OutgoingChange: Sendable {
    /// Saves a record; the policy says how it meets a stored copy.
    case save(Record, SavePolicy)
    /// Creates a record unless its ID is taken; a record that anyone made meanwhile counts as sent,
    /// so that two users who create the same thing at once both succeed.
    case create(Record)
    /// Deletes a record, and what cascades from it; one that is gone already counts as deleted.
    case delete(RecordID)
    /// Saves one of the owner's subscriptions.
    case saveSubscription(Subscription)
    /// Deletes one of the owner's subscriptions by ID; one that is gone already counts as deleted.
    case deleteSubscription(String)
}

/// The durable outbox: a custom zone of the private database, one record per target record.
///
/// A later change to the same target replaces the earlier one, so that an
/// edit before sending sends only the final text. A save keeps the record in
/// the store's own stored-field text, its assets and bytes beside it (see ``PendingRecord``).
/// An outbox record that does not read gives a failed entry that says why; it is kept until discarded.
struct Outbox: Sendable {
    static let zone = ZoneID(zoneName: "fatchatOutbox")
    static let itemType = "OutboxItem"

    let database: RecordDatabase
    /// Records already decoded from their outbox text, by the outbox record's name and change tag.
    private let decoded = DecodedRecords()

    init(database: RecordDatabase) throws {
        self.database = database
        // Nothing follows the outbox's changes, so it keeps no change feed: each enqueue and
        // each removal then costs no change-log entry. An outbox made by an older build is switched over.
        if (try? database.capabilities(of: Self.zone)) != [] {
            try database.saveZone(Self.zone, capabilities: [])
        }
        // Finding what is pending is an index lookup, however long the outbox grew.
        if try database.indexes(ofType: Self.itemType)["state"] == nil {
            try database.setIndexes(.queryable, forField: "state", ofType: Self.itemType)
        }
    }

    /// Adds changes atomically; a change to a record already in the outbox replaces it.
    func enqueue(saving records: [Record], deleting ids: [RecordID], savePolicy: SavePolicy = .ifServerRecordUnchanged) throws {
        try enqueue(records.map { .save($0, savePolicy) } + ids.map { .delete($0) })
    }

    /// Adds changes atomically, in this order; a change to a target already in the outbox replaces it.
    func enqueue(_ changes: [OutgoingChange]) throws {
        var order = Int64(Date().timeIntervalSince1970 * 1_000_000_000)
        var items: [Record] = []
        for change in changes {
            order += 1
            var item: Record
            switch change {
            case .save(let record, let savePolicy):
                item = try saveItem(record)
                if savePolicy != .ifServerRecordUnchanged { item["policy"] = .string(savePolicy.rawValue) }
            case .create(let record):
                item = try saveItem(record)
                item["createOnly"] = 1
            case .delete(let id):
                item = Record(recordType: Self.itemType, recordID: itemID(id))
                item["op"] = .string(OutboxEntry.Operation.delete.rawValue)
                item["type"] = ""
            case .saveSubscription(let subscription):
                item = Record(recordType: Self.itemType, recordID: itemID(Self.subscriptionTarget(subscription.subscriptionID)))
                item["op"] = .string(OutboxEntry.Operation.subscribe.rawValue)
                item["type"] = ""
                item["body"] = .bytes(try JSONEncoder().encode(subscription))
            case .deleteSubscription(let id):
                item = Record(recordType: Self.itemType, recordID: itemID(Self.subscriptionTarget(id)))
                item["op"] = .string(OutboxEntry.Operation.unsubscribe.rawValue)
                item["type"] = ""
            }
            item["state"] = "pending"
            item["order"] = .int64(order)
            items.append(item)
        }
        for start in stride(from: 0, to: items.count, by: RecordDatabase.maximumBatchSize) {
            let batch = Array(items[start..<min(start + RecordDatabase.maximumBatchSize, items.count)])
            let result = try database.modifyRecords(saving: batch, deleting: [], savePolicy: .allKeys)
            if let failure = result.partialFailure {
                throw failure.partialErrors.values.first ?? failure
            }
        }
    }

    /// The outbox record that holds a save of `record`.
    private func saveItem(_ record: Record) throws -> Record {
        var item = Record(recordType: Self.itemType, recordID: itemID(record.recordID))
        item["op"] = .string(OutboxEntry.Operation.save.rawValue)
        item["type"] = .string(record.recordType)
        try PendingRecord.write(record, into: &item)
        return item
    }

    /// The target ID an outbox entry for a subscription goes by: no record is named so.
    static func subscriptionTarget(_ id: String) -> RecordID { RecordID(recordName: subscriptionPrefix + id) }
    static let subscriptionPrefix = "subscription:"

    /// Every entry, oldest first.
    func entries() throws -> [OutboxEntry] {
        try database.allRecords(in: Self.zone).map(entry).sorted { $0.order < $1.order }
    }

    /// Entries waiting to be sent, oldest first.
    func pending(limit: Int) throws -> [OutboxEntry] {
        try database.records(matching: try query(state: "pending"), inZone: Self.zone, resultsLimit: limit).records
            .map(entry).sorted { $0.order < $1.order }
    }

    /// How many entries wait, and how many failed for good; without loading their fields.
    func counts() throws -> (pending: Int, failed: Int) {
        func count(_ state: String) throws -> Int {
            try database.countRecords(matching: try query(state: state), inZone: Self.zone)
        }
        return (try count("pending"), try count("failed"))
    }

    private func query(state: String) throws -> Query {
        Query(recordType: Self.itemType, predicate: try QueryPredicate(format: "state == %@", state),
              sortDescriptors: [try QuerySortDescriptor(key: "creationDate")])
    }

    /// Removes the sent entries and marks the failed ones, in one commit per 400.
    ///
    /// Only entries that are still the ones that were sent: a change queued for
    /// the same record while the send was under way replaced the entry (a new
    /// change tag), and it must stay to be sent in its turn. Both the deletes
    /// and the marks are conditional on the tag read with the entry, checked in
    /// the transaction. Not atomic: another process of the same user may have
    /// settled an entry already.
    func settle(_ settlement: Settlement) throws {
        var marked: [Record] = []
        var tags: [RecordID: String] = [:]
        for (id, handled) in settlement.handled {
            if let error = handled.error {
                var item = handled.entry.item
                item["state"] = "failed"
                item["errorCode"] = .string(error.code.rawValue)
                item["errorMessage"] = .string(error.message)
                marked.append(item)
            } else if let tag = handled.entry.item.recordChangeTag {
                tags[id] = tag
            }
        }
        let removals = Array(tags.keys)
        let size = RecordDatabase.maximumBatchSize
        for start in stride(from: 0, to: marked.count + removals.count, by: size) {
            let saves = Array(marked.dropFirst(start).prefix(size))
            let deletes = Array(removals.dropFirst(max(0, start - marked.count)).prefix(size - saves.count))
            _ = try database.modifyRecords(saving: saves, deleting: deletes, atomically: false, deletingOnlyIfUnchanged: tags)
        }
    }

    /// Puts a failed entry back in line.
    func retry(_ id: RecordID) throws {
        var item = try database.record(for: itemID(id))
        item["state"] = "pending"
        item["errorCode"] = nil
        item["errorMessage"] = nil
        try database.save(item, savePolicy: .allKeys)
    }

    /// Drops an entry without sending it.
    func discard(_ id: RecordID) throws {
        try database.deleteRecord(withID: itemID(id))
    }

    func state(of id: RecordID) throws -> OutboxState {
        try entry(for: id)?.state ?? .sent
    }

    /// The entry for one target, if it is in the outbox.
    func entry(for id: RecordID) throws -> OutboxEntry? {
        guard let item = try? database.record(for: itemID(id)) else { return nil }
        return entry(item)
    }

    private func itemID(_ target: RecordID) -> RecordID {
        RecordID(recordName: target.recordName, zoneID: Self.zone)
    }

    /// The entry an outbox record holds; a damaged one gives a failed entry that says what is wrong.
    private func entry(_ item: Record) -> OutboxEntry {
        let target = RecordID(recordName: item.recordID.recordName)
        let type = item["type"]?.stringValue ?? ""
        var entry = OutboxEntry(recordID: target, recordType: type, operation: .save, state: .pending, item: item)
        if item["state"]?.stringValue == "failed" {
            let code = item["errorCode"]?.stringValue.flatMap(StoreError.Code.init(rawValue:)) ?? .internalError
            entry.state = .failed(code: code, message: item["errorMessage"]?.stringValue ?? "")
        }
        entry.savePolicy = item["policy"]?.stringValue.flatMap(SavePolicy.init(rawValue:)) ?? .ifServerRecordUnchanged
        entry.createsOnly = item["createOnly"]?.int64Value == 1
        do {
            guard let op = item["op"]?.stringValue.flatMap(OutboxEntry.Operation.init(rawValue:)) else {
                throw StoreError(.badDatabase, "Its operation is not one the outbox writes.")
            }
            entry.operation = op
            switch op {
            case .save: entry.record = try record(item, type: type, target: target)
            case .subscribe: entry.subscription = try Self.subscription(item)
            case .delete, .unsubscribe: break
            }
        } catch {
            let cause = (error as? StoreError)?.message ?? "\(error)"
            entry.isUnreadable = true
            entry.state = .failed(code: .badDatabase, message: "The queued change to \(target) cannot be read from the outbox; "
                                  + "it stays there, marked failed, until it is discarded. \(cause)")
        }
        return entry
    }

    /// The record a save holds, decoded from its text once per change of the outbox record.
    private func record(_ item: Record, type: String, target: RecordID) throws -> Record {
        let key = "\(item.recordID.recordName)\u{0}\(item.recordChangeTag ?? "")"
        if let known = decoded[key] { return known }
        let record = try PendingRecord.read(from: item, type: type, id: target)
        decoded[key] = record
        return record
    }

    private static func subscription(_ item: Record) throws -> Subscription {
        guard let body = item["body"]?.bytesValue, let subscription = try? JSONDecoder().decode(Subscription.self, from: body) else {
            throw StoreError(.badDatabase, "Its subscription does not decode.")
        }
        return subscription
    }
}

/// The outbox's decoded records, so that an entry the send loop lists again and again
/// (while it waits, or while later batches go out) is parsed from its text once.
///
/// A key holds the outbox record's change tag, which a replaced entry changes, so a
/// stale record is never handed out. Cleared whole when full: the cache only saves work.
final class DecodedRecords: Sendable {
    private let records = Mutex<[String: Record]>([:])
    private static let capacity = 4096

    subscript(key: String) -> Record? {
        get { records.withLock { $0[key] } }
        set {
            records.withLock { records in
                if records.count >= Self.capacity { records.removeAll(keepingCapacity: true) }
                records[key] = newValue
            }
        }
    }
}
