import Foundation
import Synchronization

/// The one seam between RecordStore's logic and the engine that holds the data.
///
/// Records, the change feed, zones and locks go through this protocol, so
/// that nothing above it knows whether SQLite (local or network mode) or,
/// later, a database server keeps the data.
protocol RecordStorage: Sendable {
    /// A stable identity of this database, which change tokens carry.
    var databaseID: String { get }

    /// Runs `body` on a consistent snapshot.
    func read<T>(_ body: (any StorageReader) throws -> T) throws -> T

    /// Runs `body` in one transaction that holds the database's write lock. `body` may run twice,
    /// when a guess it took (`StorageWriter.guessLookUp`) was wrong: what it changes outside the
    /// writer must bear being done again.
    ///
    /// A `body` that throws rolls everything back. The storage retries busy
    /// locks itself; `SQLITE_BUSY` never reaches the caller.
    func write<T>(_ body: (any StorageWriter) throws -> T) throws -> T

    /// A cheap way to learn that another process committed.
    func makeChangeSignal() throws -> any StorageChangeSignal

    /// `StorageReader.changesWithBounds` on one snapshot: in a read transaction, or without one where
    /// the engine reads it all in one statement, which is a snapshot by itself (PostgreSQL, and SQLite in local mode). Every
    /// wake-up of a sync engine asks this.
    func changesWithBounds(after sequence: Int64, zone: String?, limit: Int) throws -> (bounds: ChangeBounds, scan: ChangeScan?)

    /// Where the engine keeps accounts' public keys itself (PostgreSQL), or nil when they are files in the container.
    func keyTable() throws -> (any PublishedKeyTable)?
}

extension RecordStorage {
    /// Engines on a shared filesystem publish keys as files (see `KeyDirectory`).
    func keyTable() throws -> (any PublishedKeyTable)? { nil }

    func changesWithBounds(after sequence: Int64, zone: String?, limit: Int) throws -> (bounds: ChangeBounds, scan: ChangeScan?) {
        try read { try $0.changesWithBounds(after: sequence, zone: zone, limit: limit) }
    }
}

/// Public keys kept as rows of the database, each writable only by its own account.
protocol PublishedKeyTable: Sendable {
    /// Publishes (or replaces) the key text of `account`, the caller's own.
    func publish(account: String, text: Data) throws
    /// The key text `account` published, or nil when there is none that can be believed.
    func text(of account: String) throws -> Data?
    /// The accounts whose whole name is `userName`, or that end in `_<userName>`.
    func accounts(endingWith userName: String) throws -> [String]
}

/// One change-log entry.
struct ChangeRow: Sendable {
    enum Kind: Int, Sendable {
        case created = 0
        case updated = 1
        case deleted = 2
    }

    var sequence: Int64
    var recordID: RecordID
    var recordType: String
    var kind: Kind
    /// The fields before an update or delete, so that subscriptions can tell what stopped matching.
    var previousFields: [String: FieldValue]?
    var date: Date
    /// The record as it is now, read with the change; `nil` when it was deleted since.
    var current: Record?

    /// The record types whose updates the feed being read wants the previous fields of; `nil` for all.
    /// Set by `RecordDatabase.fetchChanges(previousFieldsOf:)` around its read.
    @TaskLocal static var previousWanted: Set<String>?

    /// The record types whose changes the feed being read passes over: their sequences count, so the
    /// position moves past them, but they are neither decoded nor returned. Set by
    /// `RecordDatabase.fetchChanges(passingOver:)` around its read.
    @TaskLocal static var passedOver: Set<String> = []

    /// An entry's `previous` text decoded, unless it is an update of a type the reader does not want them
    /// for: decoding them was as much work as decoding the record, on every wake-up of every client.
    static func previousFields(_ text: String?, kind: Kind, type: String, zone: ZoneID, assets: URL) throws -> [String: FieldValue]? {
        guard let text else { return nil }
        if kind == .updated, let wanted = previousWanted, !wanted.contains(type) { return nil }
        return try FieldCoding.decode(text, zone: zone, assetsDirectory: assets)
    }
}

/// The change-log entries one read went over.
struct ChangeScan: Sendable {
    /// The entries that decoded, in order.
    var rows: [ChangeRow] = []
    /// The sequence of every entry read, damaged or not, in order: how far the read got.
    var sequences: [Int64] = []
}

/// Reads that any storage engine answers.
protocol StorageReader {
    func record(_ id: RecordID, keys: Set<String>?) throws -> Record?
    func exists(_ id: RecordID) throws -> Bool
    /// Up to `limit` IDs of the zone's records whose row number is past `row`, in row order, and the last row number
    /// read (nil when none was). The row number, an integer that only grows, is the bound, never the name: a
    /// name someone stored as a blob or with a NUL reads back as other text, and a bound on it could stand still.
    func recordIDs(inZone zone: String, afterRow row: Int64, limit: Int) throws -> (ids: [RecordID], lastRow: Int64?)
    func zoneNames() throws -> [String]
    /// Whether saves and deletes in the zone go into the change log; `nil` when there is no such zone.
    func zoneKeepsChanges(_ name: String) throws -> Bool?
    /// Up to `limit` change-log entries after `sequence`, oldest first, optionally for one zone; damaged ones are skipped.
    func changes(after sequence: Int64, zone: String?, limit: Int) throws -> ChangeScan
    /// The newest sequence in the change log and how far it was pruned, read together in one statement.
    func changeBounds() throws -> ChangeBounds
    /// `changeBounds()` and the entries after `sequence` unless the log was pruned past it (`nil` then),
    /// read in one statement, so that they come from one snapshot even outside a transaction.
    func changesWithBounds(after sequence: Int64, zone: String?, limit: Int) throws -> (bounds: ChangeBounds, scan: ChangeScan?)
    /// One page of a query's matching records, in order, each with its position for a cursor.
    /// A row that does not decode keeps its place with a `nil` record, so a cursor still moves past it.
    func records(matching request: QueryRequest) throws -> [(record: Record?, position: QueryPosition)]
    /// How many records a query matches.
    func countRecords(matching query: Query, zone: String?) throws -> Int
    /// The index marks of a record type's fields.
    func fieldMarks(recordType: String) throws -> [String: FieldIndexOptions]
    /// The stored subscriptions of one owner, each with its ID, as the text the database layer saved.
    func subscriptionBodies(owner: String) throws -> [(id: String, body: String)]
    /// Each record type with its record count and the type of each field key seen.
    func recordTypeSummary() throws -> [RecordTypeSummary]
    /// Problems an integrity check found; empty when all is well.
    func integrityProblems() throws -> [String]
    /// Every owner's subscriptions whose parent record is gone or was created again since they were saved.
    func orphanedSubscriptions() throws -> [OrphanedSubscription]
}

/// The two ends of the change log as one reader sees them.
struct ChangeBounds {
    /// The newest sequence number: the pruned mark when the log is empty, 0 when it was never written.
    var latest: Int64
    /// Entries up to and including this one were pruned; older tokens are expired.
    var pruned: Int64
}

extension StorageReader {
    /// Every record ID in the zone, read a page at a time.
    func recordIDs(inZone zone: String) throws -> [RecordID] {
        var ids: [RecordID] = []
        var row: Int64 = 0
        while case let page = try recordIDs(inZone: zone, afterRow: row, limit: 10_000), let last = page.lastRow {
            ids += page.ids
            row = last
        }
        return ids
    }

    /// The newest sequence number in the change log, 0 when empty.
    func latestSequence() throws -> Int64 { try changeBounds().latest }
    /// Entries up to and including this sequence were pruned; older tokens are expired.
    func prunedThrough() throws -> Int64 { try changeBounds().pruned }
}

/// Writes, made inside `RecordStorage.write`.
protocol StorageWriter: StorageReader {
    /// Inserts the record or replaces the stored one, with its system fields as given.
    /// `isNew`: the caller found no stored record, so there is nothing of it to clear first.
    func upsert(_ record: Record, isNew: Bool) throws
    /// Looks up, before a batch's first save, what its saves will ask for; what it leaves out is read when asked.
    func lookUp(saving records: [Record], targets: [RecordID]) throws -> SaveLookUp
    /// Instead of `lookUp`, for saves that can only create: takes it that none of `records` is stored
    /// and that every one of `targets` exists, and checks that as the batch commits, under the write
    /// lock. A wrong guess saves nothing and runs the whole `write` again, looking up. `nil` when
    /// the engine looks up instead, as one whose look-up costs no round trip does.
    func guessLookUp(saving records: [Record], targets: [RecordID]) throws -> SaveLookUp?
    /// Removes a stored record, as the caller read it.
    func remove(_ record: Record) throws
    /// Removes a stored record that does not decode; returns its type, or "" when even that is unreadable.
    func removeUndecodable(_ id: RecordID) throws -> String
    /// The records that hold a `deleteSelf` reference to `id`.
    func cascadingChildren(of id: RecordID) throws -> [RecordID]
    /// Whether any record still uses the asset with this content hash.
    func isAssetInUse(_ hash: String) throws -> Bool
    /// Drops the engine's own copy of an asset no record uses any more (the server's row); files are `AssetStore`'s.
    func forgetAsset(_ hash: String) throws
    func appendChange(_ id: RecordID, type: String, kind: ChangeRow.Kind, previousFields: [String: FieldValue]?, date: Date) throws
    /// Drops change-log entries so that at most `keep` remain.
    func pruneChanges(keeping keep: Int) throws
    /// Creates a zone, or sets whether an existing one keeps a change log.
    func createZone(_ name: String, date: Date, keepsChanges: Bool) throws
    /// Removes an empty zone's entry; its records must be removed first.
    func removeZone(_ name: String) throws
    /// Runs `body` so that, if it throws, only its own writes are undone.
    func savepoint<T>(_ body: () throws -> T) throws -> T
    /// Marks a field of a record type (empty options remove the mark), and builds or drops its indexes.
    func setFieldMark(_ options: FieldIndexOptions, key: String, recordType: String) throws
    /// Saves or replaces one owner's subscription, tied to its parent record if it has one.
    func saveSubscription(id: String, owner: String, body: String, parent: Subscription.Parent?) throws
    /// Deletes one owner's subscription if it is still tied to this parent; returns whether there was one.
    func deleteSubscription(id: String, owner: String, parent: Subscription.Parent) throws -> Bool
    /// Deletes every owner's subscriptions whose parent is one of these records, which this transaction deleted.
    func deleteSubscriptions(parentedBy ids: [RecordID]) throws
    /// Deletes one owner's subscription; returns whether there was one.
    func deleteSubscription(id: String, owner: String) throws -> Bool
    /// Removes every record, change and subscription, telling `progress` how far it is now and then;
    /// returns the asset hashes that were in use.
    func eraseAll(progress: (ErasureProgress) -> Void) throws -> Set<String>
}

extension StorageWriter {
    /// Engines on a shared filesystem keep assets only as files.
    func forgetAsset(_ hash: String) throws {}

    /// Engines on a file answer each look-up of a save at once, when the save asks.
    func lookUp(saving records: [Record], targets: [RecordID]) throws -> SaveLookUp { SaveLookUp() }

    /// Engines on a file look up: a guess would save them nothing.
    func guessLookUp(saving records: [Record], targets: [RecordID]) throws -> SaveLookUp? { nil }

    /// Saves or replaces one owner's subscription that belongs to no record.
    func saveSubscription(id: String, owner: String, body: String) throws {
        try saveSubscription(id: id, owner: owner, body: body, parent: nil)
    }
}

/// Lookups an engine keeps for the length of one transaction, which also sees its own changes to them.
final class TransactionMemo {
    /// Each record type's searchable keys, in order.
    var searchableKeys: [String: [String]] = [:]
}

/// What an engine looked up for a batch of saves before the first: a server answers them all in one round trip.
struct SaveLookUp {
    /// Records to be saved, as stored (`nil` inside: none is); an ID missing here is read when its save comes.
    var stored: [RecordID: Record?] = [:]
    /// Reference targets found to exist.
    var existing: Set<RecordID> = []
}

/// Tells cheaply whether another connection committed since the last call.
protocol StorageChangeSignal: Sendable {
    /// `true` if the database may have changed since the previous call (or this is the first call).
    func hasChanged() throws -> Bool
    /// Calls `wake` whenever the server pushes news of a commit (PostgreSQL's NOTIFY), so a waiting engine asks at once.
    func onPush(_ wake: @escaping @Sendable () -> Void)
    /// Whether `hasChanged` brings the changes in as well as telling of them (the log engine's poll), so a caller must ask even after a bell.
    var readsWhenAsked: Bool { get }
}

extension StorageChangeSignal {
    /// Engines that only answer when asked push nothing.
    func onPush(_ wake: @escaping @Sendable () -> Void) {}
    var readsWhenAsked: Bool { false }
}

extension RecordStorage {
    /// A change signal that reads the newest change-log sequence: correct on any engine, one read per call.
    func makeSequenceSignal() -> any StorageChangeSignal { SequenceChangeSignal(storage: self) }
}

/// Compares the newest change-log sequence with the one seen last time.
final class SequenceChangeSignal: StorageChangeSignal {
    private let storage: any RecordStorage
    private let last = Mutex<Int64?>(nil)

    init(storage: any RecordStorage) { self.storage = storage }

    func hasChanged() throws -> Bool {
        let latest = try storage.read { try $0.latestSequence() }
        return last.withLock { previous in
            defer { previous = latest }
            return previous != latest
        }
    }
}
