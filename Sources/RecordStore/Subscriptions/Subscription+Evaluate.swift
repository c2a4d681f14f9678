import Foundation

extension Subscription {
    /// Turns a batch of changes into notifications: a pure function, with no database access.
    ///
    /// A query subscription compares the record before a change (its
    /// `previousFields`) with the record after it, so an update that makes a
    /// record stop matching is reported with `stoppedMatching`. For a deletion
    /// only the fields are known, so predicates on system fields do not match it.
    /// A subscription whose parent record a change shows gone (deleted, or
    /// created again) fires no more and is listed for deletion.
    /// `searchableKeys` gives, per record type, the fields that token search
    /// covers; a type not listed searches all of its string fields. With
    /// `atMostOnePerChange`, a change raises one notification at most (from the
    /// first subscription, by ID, that fires), so that no set of stored
    /// subscriptions can make one change notify a client several times.
    public static func evaluate(
        _ changes: [RecordChange],
        subscriptions: [Subscription],
        strings: AlertStrings = AlertStrings(),
        searchableKeys: [String: Set<String>] = [:],
        atMostOnePerChange: Bool = false
    ) -> SubscriptionEvaluation {
        var notifications: [SubscriptionNotification] = []
        var spent: [String] = []
        for change in changes {
            for subscription in subscriptions where !spent.contains(subscription.subscriptionID) {
                // Its parent is gone: it stops here, and the caller deletes it (another user's delete may not have).
                if let parent = subscription.parent, parent.isGone(after: change) {
                    spent.append(subscription.subscriptionID)
                    continue
                }
                let evaluation = PredicateEvaluation(searchableKeys: searchableKeys[change.recordType])
                guard let fired = subscription.fire(for: change, evaluation: evaluation, strings: strings) else { continue }
                notifications.append(fired)
                if case .query(_, _, let options, _) = subscription.kind, options.contains(.firesOnce) {
                    spent.append(subscription.subscriptionID)
                }
                if atMostOnePerChange { break }
            }
        }
        return SubscriptionEvaluation(notifications: notifications, subscriptionsToDelete: spent)
    }

    private func fire(for change: RecordChange, evaluation: PredicateEvaluation, strings: AlertStrings) -> SubscriptionNotification? {
        let before = change.previousFields.map { Self.previous(change, fields: $0) }
        let after = change.kind == .deleted ? nil : change.record
        switch kind {
        case .zone(let zone, let recordType):
            guard change.recordID.zoneID.zoneName == zone.zoneName, recordType == nil || recordType == change.recordType else { return nil }
            return notification(change, Self.reason(change.kind), stoppedMatching: false, source: after ?? before, strings: strings)
        case .query(let recordType, let predicate, let options, let zone):
            guard change.recordType == recordType else { return nil }
            if let zone, zone.zoneName != change.recordID.zoneID.zoneName { return nil }
            let matchesAfter = after.map { evaluation.matches(predicate.root, $0) } ?? false
            let matchesBefore = before.map { evaluation.matches(predicate.root, $0) } ?? false
            switch change.kind {
            case .created:
                guard options.contains(.firesOnRecordCreation), matchesAfter else { return nil }
                return notification(change, .created, stoppedMatching: false, source: after, strings: strings)
            case .updated:
                guard options.contains(.firesOnRecordUpdate), matchesAfter || matchesBefore else { return nil }
                return notification(change, .updated, stoppedMatching: !matchesAfter, source: after ?? before, strings: strings)
            case .deleted:
                guard options.contains(.firesOnRecordDeletion), matchesBefore else { return nil }
                return notification(change, .deleted, stoppedMatching: false, source: before, strings: strings)
            }
        }
    }

    /// The record as it was before the change: its previous fields, with the system fields an update keeps.
    private static func previous(_ change: RecordChange, fields: [String: FieldValue]) -> Record {
        var record = Record(stored: change.recordType, recordID: change.recordID, fields: fields)
        if change.kind == .updated, let current = change.record {
            record.creationDate = current.creationDate
            record.creatorUserRecordID = current.creatorUserRecordID
        }
        return record
    }

    private static func reason(_ kind: RecordChange.Kind) -> SubscriptionNotification.Reason {
        switch kind {
        case .created: .created
        case .updated: .updated
        case .deleted: .deleted
        }
    }

    private func notification(_ change: RecordChange, _ reason: SubscriptionNotification.Reason, stoppedMatching: Bool,
                              source: Record?, strings: AlertStrings) -> SubscriptionNotification {
        let info = notificationInfo
        var fields: [String: FieldValue] = [:]
        for key in info.desiredKeys ?? [] { fields[key] = source?[key] }
        var alert = info.alertBody
        if alert == nil, let key = info.alertLocalizationKey {
            alert = strings.render(key, info.alertLocalizationArgs.map { source?[$0].map(Self.text) ?? "" })
        }
        return SubscriptionNotification(subscriptionID: subscriptionID, reason: reason, stoppedMatching: stoppedMatching,
                                        recordID: change.recordID, recordType: change.recordType, fields: fields,
                                        alertText: alert, shouldBadge: info.shouldBadge)
    }

    /// A field value as alert text.
    static func text(_ value: FieldValue) -> String {
        switch value {
        case .string(let s): s
        case .int64(let i): String(i)
        case .double(let d): String(d)
        case .bytes(let d): "\(d.count) bytes"
        case .date(let d): d.formatted(.iso8601)
        case .location(let l): "\(l.latitude), \(l.longitude)"
        case .reference(let r): r.recordID.recordName
        case .asset(let a): a.contentHash ?? a.fileURL.lastPathComponent
        case .list(let items): items.map(text).joined(separator: ", ")
        }
    }
}
