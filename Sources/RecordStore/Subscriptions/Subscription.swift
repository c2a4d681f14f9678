import Foundation

/// A standing request to be told about changes, as CloudKit's `CKQuerySubscription` and `CKRecordZoneSubscription`.
///
/// Subscriptions are stored in the database and belong to the user who saved
/// them. The sync engine runs `Subscription.evaluate` over each batch of
/// changes it fetches.
public struct Subscription: Hashable, Sendable {
    /// What a subscription watches.
    public enum Kind: Hashable, Sendable {
        /// Records of one type that match a predicate, optionally in one zone.
        case query(recordType: String, predicate: QueryPredicate, options: QuerySubscriptionOptions, zone: ZoneID?)
        /// Every change in a zone of a private database, optionally for one record type.
        case zone(ZoneID, recordType: String?)
    }

    /// Chosen by the caller; saving a subscription with the same ID replaces it.
    public var subscriptionID: String
    /// What the subscription watches.
    public var kind: Kind
    /// What its notifications show.
    public var notificationInfo: NotificationInfo
    /// The record this subscription exists for, if any: deleting that record deletes the subscription, whoever owns it.
    public var parent: Parent?

    /// A query subscription: records of `recordType` matching `predicate`, on the events in `options`.
    public init(subscriptionID: String, recordType: String, predicate: QueryPredicate = .all,
                options: QuerySubscriptionOptions, zone: ZoneID? = nil, notificationInfo: NotificationInfo = NotificationInfo(),
                parent: Parent? = nil) {
        self.subscriptionID = subscriptionID
        self.kind = .query(recordType: recordType, predicate: predicate, options: options, zone: zone)
        self.notificationInfo = notificationInfo
        self.parent = parent
    }

    /// A zone subscription: any change in `zone`, or only to records of `recordType`.
    public init(subscriptionID: String, zone: ZoneID, recordType: String? = nil, notificationInfo: NotificationInfo = NotificationInfo(),
                parent: Parent? = nil) {
        self.subscriptionID = subscriptionID
        self.kind = .zone(zone, recordType: recordType)
        self.notificationInfo = notificationInfo
        self.parent = parent
    }

    /// The record a subscription belongs to, as a `deleteSelf` reference makes a record belong to another.
    ///
    /// A record deleted and then created again under the same name is another
    /// record: its creation date differs, and a subscription saved for the
    /// first one never fires for the second.
    public struct Parent: Hashable, Sendable {
        /// The parent record, in the subscription's database.
        public var recordID: RecordID
        /// When the parent was created; saving the subscription fills it in when `nil`.
        public var creationDate: Date?

        /// A parent; give the creation date you read, so that a save after the record was re-created fails.
        public init(recordID: RecordID, creationDate: Date? = nil) {
            self.recordID = recordID
            self.creationDate = creationDate
        }

        /// Whether `record` is this parent itself, rather than a later record with the same ID.
        public func isSame(as record: Record) -> Bool {
            guard record.recordID == recordID else { return false }
            guard let creationDate, let created = record.creationDate else { return true }
            return Self.sameInstant(creationDate, created)
        }

        /// How far apart, in seconds, two creation dates of one record may read. Every engine keeps a date
        /// as a double of seconds since 1970, and `Date` keeps it since 2001, so a date read back may differ
        /// by the rounding of that shift, well under a microsecond. A record deleted and created again
        /// takes more than that; it took less than a millisecond, the margin before, on a quick machine.
        static let sameInstantTolerance = 0.000_001

        static func sameInstant(_ a: Date, _ b: Date) -> Bool {
            abs(a.timeIntervalSince1970 - b.timeIntervalSince1970) < sameInstantTolerance
        }
    }
}

/// When a query subscription fires, as `CKQuerySubscription.Options`.
public struct QuerySubscriptionOptions: OptionSet, Hashable, Sendable, Codable {
    /// The option bits.
    public let rawValue: Int
    /// Initializes from the raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// A matching record was created.
    public static let firesOnRecordCreation = QuerySubscriptionOptions(rawValue: 1)
    /// A matching record was changed, including a change that makes it stop matching.
    public static let firesOnRecordUpdate = QuerySubscriptionOptions(rawValue: 2)
    /// A matching record was deleted.
    public static let firesOnRecordDeletion = QuerySubscriptionOptions(rawValue: 4)
    /// The subscription is deleted after it fires once.
    public static let firesOnce = QuerySubscriptionOptions(rawValue: 8)
}

/// What a notification shows, as `CKSubscription.NotificationInfo`.
public struct NotificationInfo: Hashable, Sendable, Codable {
    /// A fixed alert text; it wins over a localized one.
    public var alertBody: String?
    /// A key into the localized alert strings; its format is filled from `alertLocalizationArgs`.
    public var alertLocalizationKey: String?
    /// Field keys whose values fill the format's `%@` (or `%1$@`, `%2$@`, …) in order.
    public var alertLocalizationArgs: [String]
    /// Whether the notification should raise the unread badge.
    public var shouldBadge: Bool
    /// The fields a notification carries; none when `nil`.
    public var desiredKeys: [String]?

    /// Notification info; everything is optional.
    public init(alertBody: String? = nil, alertLocalizationKey: String? = nil, alertLocalizationArgs: [String] = [],
                shouldBadge: Bool = false, desiredKeys: [String]? = nil) {
        self.alertBody = alertBody
        self.alertLocalizationKey = alertLocalizationKey
        self.alertLocalizationArgs = alertLocalizationArgs
        self.shouldBadge = shouldBadge
        self.desiredKeys = desiredKeys
    }
}

/// One notification that a change raised for one subscription.
public struct SubscriptionNotification: Hashable, Sendable {
    /// Why it fired.
    public enum Reason: String, Hashable, Sendable {
        case created, updated, deleted
    }

    /// The subscription that fired.
    public var subscriptionID: String
    /// Whether the record was created, updated or deleted.
    public var reason: Reason
    /// For an update: the record matched before and no longer does.
    public var stoppedMatching: Bool
    /// The record that changed.
    public var recordID: RecordID
    /// The type of the record that changed.
    public var recordType: String
    /// The subscription's desired fields, as the record has them now (before, for a deletion).
    public var fields: [String: FieldValue]
    /// Who created the record: its sender, whatever a field such as a handle claims; `nil` when unknown.
    public var creatorUserRecordID: RecordID?
    /// The rendered alert, or `nil` if the subscription has none.
    public var alertText: String?
    /// Whether the notification should raise the unread badge.
    public var shouldBadge: Bool
}

/// What evaluating a batch of changes gives: the notifications, and the fired `firesOnce` subscriptions to delete.
public struct SubscriptionEvaluation: Sendable {
    /// In the order of the changes that raised them.
    public var notifications: [SubscriptionNotification]
    /// IDs of `firesOnce` subscriptions that fired, and of subscriptions whose parent the changes show gone; the caller deletes them.
    public var subscriptionsToDelete: [String]
}
