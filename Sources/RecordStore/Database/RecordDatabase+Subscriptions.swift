import Foundation

extension RecordDatabase {
    /// Saves a subscription for the current user, replacing theirs with the same ID; returns it as stored.
    ///
    /// A subscription with a parent is checked against it in the same
    /// transaction: `referenceViolation` if the parent is gone or was created again.
    @discardableResult
    public func save(_ subscription: Subscription) throws -> Subscription {
        try check(subscription)
        return try storage.write { writer in
            var stored = subscription
            if let parent = subscription.parent { stored.parent = try confirm(parent, of: subscription.subscriptionID, in: writer) }
            let body: String
            do {
                body = String(decoding: try JSONEncoder().encode(stored), as: UTF8.self)
            } catch let error as StoreError {
                throw error
            } catch {
                throw StoreError(.invalidArguments, "Subscription '\(subscription.subscriptionID)' cannot be stored: \(error).")
            }
            guard body.utf8.count <= Subscription.maximumStoredSize else {
                throw StoreError(.limitExceeded, "Subscription '\(subscription.subscriptionID)' takes \(body.utf8.count) bytes stored; at most \(Subscription.maximumStoredSize) fit. Use a shorter predicate or fewer keys.")
            }
            try writer.saveSubscription(id: subscription.subscriptionID, owner: user.recordID.recordName, body: body, parent: stored.parent)
            return stored
        }
    }

    /// The current user's subscriptions in this database, by ID.
    ///
    /// A stored subscription that does not decode, or whose body names another
    /// ID than its row, is skipped and logged (`DamagedRowLog`): anyone who can
    /// write the file can plant such rows, and one must not stop the others.
    public func allSubscriptions() throws -> [Subscription] {
        try storage.read { try subscriptions(in: $0) }
    }

    /// `allSubscriptions`, read through `reader`.
    func subscriptions(in reader: any StorageReader) throws -> [Subscription] {
        let owner = user.recordID.recordName
        return try reader.subscriptionBodies(owner: owner).compactMap { row in
            try StoredColumns.skippingDamage {
                try decoded(StoredSubscription(owner: owner, id: row.id, body: row.body))
            }
        }
    }

    /// A subscription row decoded, or as it was decoded before from the very same row.
    ///
    /// Every running engine reads its owner's subscriptions every few seconds, and decoding one costs far more
    /// than reading it. A row that does not decode is not kept, so it is refused each time it is read.
    private func decoded(_ row: StoredSubscription) throws -> Subscription {
        if let known = decodedSubscriptions.withLock({ $0[row] }) { return known }
        let subscription = try Subscription(storedID: row.id, body: row.body, owner: row.owner)
        decodedSubscriptions.withLock { memo in
            // A user has a handful; many more means they are churning, and the memo starts again.
            if memo.count >= 256 { memo.removeAll() }
            memo[row] = subscription
        }
        return subscription
    }

    /// Deletes one of the current user's subscriptions; `unknownItem` if they have none with that ID.
    public func deleteSubscription(withID id: String) throws {
        guard try storage.write({ try $0.deleteSubscription(id: id, owner: user.recordID.recordName) }) else {
            throw StoreError(.unknownItem, "You have no subscription '\(id)' in the \(scope.rawValue) database.")
        }
    }

    private func check(_ subscription: Subscription) throws {
        let id = subscription.subscriptionID
        guard !id.isEmpty, id.utf8.count <= 255 else {
            throw StoreError(.invalidArguments, "A subscription ID must have 1 to 255 bytes.")
        }
        if let parent = subscription.parent { try checkZone(parent.recordID.zoneID) }
        let info = subscription.notificationInfo
        for key in info.alertLocalizationArgs + (info.desiredKeys ?? []) { try Identifier.checkFieldKey(key) }
        switch subscription.kind {
        case .query(let recordType, _, let options, let zone):
            try Identifier.checkRecordType(recordType)
            if let zone { try checkZone(zone) }
            let events: QuerySubscriptionOptions = [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion]
            if options.isDisjoint(with: events) {
                throw StoreError(.invalidArguments, "Subscription '\(id)' fires on nothing: add firesOnRecordCreation, firesOnRecordUpdate or firesOnRecordDeletion.")
            }
        case .zone(let zone, let recordType):
            guard scope == .private else {
                throw StoreError(.invalidArguments, "Zone subscriptions exist only in private databases; use a query subscription in the public database.")
            }
            if let recordType { try Identifier.checkRecordType(recordType) }
            guard try storage.read({ try $0.zoneKeepsChanges(zone.zoneName) }) != nil else {
                throw StoreError(.zoneNotFound, "There is no zone '\(zone.zoneName)' to subscribe to.")
            }
        }
    }
}

/// One row of the subscription table, as read: what a decoded subscription is kept under.
struct StoredSubscription: Hashable, Sendable {
    let owner: String
    let id: String
    let body: String
}
