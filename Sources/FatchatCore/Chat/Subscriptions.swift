import Foundation
import RecordStore

/// The query subscription that joining a channel saves: new messages in it from anyone else.
///
/// The subscription belongs to the channel record (its parent), so deleting the
/// channel deletes every member's subscription to it; a channel created again
/// under the same name starts with no subscribers.
struct Subscriptions {
    let client: ChatClient

    /// The subscription ID for a channel; one per user and channel.
    static func id(for channel: Channel) -> String { "messages.\(channel.name.key)" }

    func subscribe(to channel: Channel) throws {
        let predicate = try QueryPredicate(format: "channel == %@ AND creatorUserRecordID != %@", channel.recordID, client.user)
        let info = NotificationInfo(alertLocalizationKey: "message_alert", alertLocalizationArgs: ["handle", "text", "channelName"],
                                    shouldBadge: true, desiredKeys: ["channelName", "handle", "text"])
        // The creation date as read: if the channel was deleted (and made again) since, the save fails rather than subscribe to another channel.
        let parent = Subscription.Parent(recordID: channel.recordID, creationDate: channel.created == .distantPast ? nil : channel.created)
        do {
            try client.container.publicDatabase.save(Subscription(
                subscriptionID: Self.id(for: channel), recordType: ChatSchema.messageType, predicate: predicate,
                options: [.firesOnRecordCreation], notificationInfo: info, parent: parent))
        } catch let error as StoreError where error.code == .referenceViolation {
            throw CommandError("\(channel.name) was deleted while you joined it; /join \(channel.name.display) again.")
        }
        client.engine.subscriptionsChanged()
    }

    func unsubscribe(from channel: Channel) throws {
        // Also when the channel's deletion already took the subscription with it: the engine's copy is stale either way.
        defer { client.engine.subscriptionsChanged() }
        do {
            try client.container.publicDatabase.deleteSubscription(withID: Self.id(for: channel))
        } catch let error as StoreError where error.code == .unknownItem {
            return
        }
    }
}
