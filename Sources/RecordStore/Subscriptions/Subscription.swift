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

    /// A query subscription: records of `recordType` matching `predicate`, on the events in `options`.
    public init(subscriptionID: String, recordType: String, predicate: QueryPredicate = .all,
                options: QuerySubscriptionOptions, zone: ZoneID? = nil, notificationInfo: NotificationInfo = NotificationInfo()) {
        self.subscriptionID = subscriptionID
        self.kind = .query(recordType: recordType, predicate: predicate, options: options, zone: zone)
        self.notificationInfo = notificationInfo
    }

    /// A zone subscription: any change in `zone`, or only to records of `recordType`.
    public init(subscriptionID: String, zone: ZoneID, recordType: String? = nil, notificationInfo: NotificationInfo = NotificationInfo()) {
        self.subscriptionID = subscriptionID
        self.kind = .zone(zone, recordType: recordType)
        self.notificationInfo = notificationInfo
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
    /// The rendered alert, or `nil` if the subscription has none.
    public var alertText: String?
    /// Whether the notification should raise the unread badge.
    public var shouldBadge: Bool
}

/// What evaluating a batch of changes gives: the notifications, and the fired `firesOnce` subscriptions to delete.
public struct SubscriptionEvaluation: Sendable {
    /// In the order of the changes that raised them.
    public var notifications: [SubscriptionNotification]
    /// IDs of `firesOnce` subscriptions that fired; the caller deletes them.
    public var subscriptionsToDelete: [String]
}
