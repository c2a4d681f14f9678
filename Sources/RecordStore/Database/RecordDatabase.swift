import Foundation
import Synchronization

/// A public or private database of a container, with CloudKit's operations.
public final class RecordDatabase: Sendable {
    /// Which database this is.
    public enum Scope: String, Sendable {
        /// Shared by everyone who can open the container; only the default zone.
        case `public`
        /// One per OS user; custom zones allowed.
        case `private`
    }

    public let scope: Scope
    let storage: any RecordStorage
    let assets: AssetStore
    let user: UserIdentity
    let historyLimit: Int
    /// The keys that sign every record this database saves; the public database of a container has them.
    let signer: IdentityKeys?
    /// Subscriptions decoded before, by the exact row they were decoded from (`allSubscriptions`).
    let decodedSubscriptions = Mutex<[StoredSubscription: Subscription]>([:])
    /// Records this database replaced lately (a presence, a typing notice, a read marker): saved again, they
    /// are signed once, under the lock, rather than also before it as if they were new.
    let replacedLately = Mutex<Set<RecordID>>([])
    static let replacedLatelyLimit = 256

    init(scope: Scope, storage: any RecordStorage, assets: AssetStore, user: UserIdentity, historyLimit: Int, signer: IdentityKeys? = nil) {
        self.scope = scope
        self.storage = storage
        self.assets = assets
        self.user = user
        self.historyLimit = historyLimit
        self.signer = signer
    }

    /// The most items one modify operation takes, as in CloudKit.
    public static let maximumBatchSize = 400

    // MARK: Fetching

    /// Fetches one record; `unknownItem` if there is none.
    ///
    /// With `desiredKeys`, only those fields are loaded and the record is partial.
    public func record(for id: RecordID, desiredKeys: [String]? = nil) throws -> Record {
        guard let record = try storage.read({ try $0.record(id, keys: desiredKeys.map(Set.init)) }) else {
            throw StoreError(.unknownItem, "There is no record \(id) in the \(scope.rawValue) database.")
        }
        return record
    }

    /// Fetches several records in one snapshot, with a result for each.
    public func records(for ids: [RecordID], desiredKeys: [String]? = nil) throws -> [RecordID: Result<Record, StoreError>] {
        let keys = desiredKeys.map(Set.init)
        return try storage.read { reader in
            var results: [RecordID: Result<Record, StoreError>] = [:]
            for id in ids {
                let found: Record?
                do {
                    found = try reader.record(id, keys: keys)
                } catch let damage as DamagedRow {
                    // One damaged record fails its own item, not the others.
                    results[id] = .failure(damage.storeError)
                    continue
                }
                if let record = found {
                    results[id] = .success(record)
                } else {
                    results[id] = .failure(StoreError(.unknownItem, "There is no record \(id) in the \(scope.rawValue) database."))
                }
            }
            return results
        }
    }

    // MARK: Convenience writes

    /// Saves one record and returns it as stored, with its new change tag.
    @discardableResult
    public func save(_ record: Record, savePolicy: SavePolicy = .ifServerRecordUnchanged) throws -> Record {
        let result = try modifyRecords(saving: [record], deleting: [], savePolicy: savePolicy)
        guard let outcome = result.saveResults[record.recordID] else {
            throw StoreError(.internalError, "Saving \(record.recordID) gave no result.")
        }
        return try outcome.get()
    }

    /// Deletes one record, and every record that holds a `deleteSelf` reference to it.
    public func deleteRecord(withID id: RecordID) throws {
        let result = try modifyRecords(saving: [], deleting: [id])
        try result.deleteResults[id]?.get()
    }
}
