import Foundation

/// A subscription whose parent record is gone: it can never fire rightly again.
public struct OrphanedSubscription: Hashable, Sendable {
    /// The user who saved it, as a user record name.
    public var owner: String
    /// The subscription's ID.
    public var subscriptionID: String
    /// The parent it was saved for.
    public var parent: RecordID
}

extension RecordDatabase {
    /// The current user's subscriptions, after deleting those whose parent record is gone or was created again.
    ///
    /// Another user's delete removes this user's parented subscriptions on an
    /// engine with one shared file; an engine that keeps subscriptions per owner
    /// cannot, so each owner drops theirs here, as the sync engine does on load.
    ///
    /// The subscriptions and their parents are read in one transaction.
    public func liveSubscriptions() throws -> [Subscription] {
        let (subscriptions, orphans) = try storage.read { reader in
            let subscriptions = try self.subscriptions(in: reader)
            return (subscriptions, Self.orphans(among: subscriptions, in: reader))
        }
        guard !orphans.isEmpty else { return subscriptions }
        for orphan in subscriptions where orphans.contains(orphan.subscriptionID) { _ = try? delete(orphan) }
        return subscriptions.filter { !orphans.contains($0.subscriptionID) }
    }

    /// The IDs of those of `subscriptions` whose parent record `reader` shows gone or created again.
    private static func orphans(among subscriptions: [Subscription], in reader: any StorageReader) -> Set<String> {
        var gone: [Subscription.Parent: Bool] = [:]
        return Set(subscriptions.filter { subscription in
            guard let parent = subscription.parent else { return false }
            if let known = gone[parent] { return known }
            let isGone: Bool
            do {
                isGone = !((try reader.record(parent.recordID, keys: [])).map(parent.isSame) ?? false)
            } catch {
                // A parent row that does not decode is admin check's to report; it takes no subscription with it.
                isGone = false
            }
            gone[parent] = isGone
            return isGone
        }.map(\.subscriptionID))
    }

    /// Deletes the current user's `subscription`, unless it was saved again since for another parent; returns whether it was deleted.
    ///
    /// Dropping an orphan must not take the subscription that another terminal
    /// of the same user saved meanwhile, with the same ID, for a new parent.
    @discardableResult
    public func delete(_ subscription: Subscription) throws -> Bool {
        let owner = user.recordID.recordName, id = subscription.subscriptionID
        return try storage.write { writer in
            guard let parent = subscription.parent else { return try writer.deleteSubscription(id: id, owner: owner) }
            return try writer.deleteSubscription(id: id, owner: owner, parent: parent)
        }
    }

    /// Every user's subscriptions whose parent record is gone or was created again, for a program's check command.
    public func orphanedSubscriptions() throws -> [OrphanedSubscription] {
        try storage.read { try $0.orphanedSubscriptions() }
    }

    /// The parent as it is stored now, with its creation date; `referenceViolation` if it is gone or is a later record.
    func confirm(_ parent: Subscription.Parent, of id: String, in reader: any StorageReader) throws -> Subscription.Parent {
        guard let record = try reader.record(parent.recordID, keys: []) else {
            throw StoreError(.referenceViolation, "Subscription '\(id)' is for \(parent.recordID), which does not exist.")
        }
        guard parent.isSame(as: record) else {
            throw StoreError(.referenceViolation, "Subscription '\(id)' is for \(parent.recordID), which was deleted and created again since it was read; subscribe to the new one.")
        }
        return Subscription.Parent(recordID: parent.recordID, creationDate: record.creationDate)
    }
}
