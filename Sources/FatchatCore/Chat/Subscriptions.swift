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

    /// `confirmedCreation`: the channel was read from the shared file, so its creation date is the stored one.
    func subscribe(to channel: Channel, confirmedCreation: Bool) throws {
        let predicate = try QueryPredicate(format: "channel == %@ AND creatorUserRecordID != %@", channel.recordID, client.userRecordID)
        let info = NotificationInfo(alertLocalizationKey: "message_alert", alertLocalizationArgs: ["handle", "text", "channelName"],
                                    shouldBadge: true, desiredKeys: ["channelName", "handle", "text"])
        // Tied to the channel as read: if it is deleted (and made again) before this goes out, the save is
        // refused rather than subscribe to another channel. A channel queued here has no stored date yet.
        let parent = Subscription.Parent(recordID: channel.recordID, creationDate: confirmedCreation && channel.created != .distantPast ? channel.created : nil)
        // Through the outbox, like the membership: another process's lock on the file holds up no one.
        try client.engine.send([.saveSubscription(Subscription(
            subscriptionID: Self.id(for: channel), recordType: ChatSchema.messageType, predicate: predicate,
            options: [.firesOnRecordCreation], notificationInfo: info, parent: parent))])
    }

    func unsubscribe(from channel: Channel) throws {
        try client.engine.send([.deleteSubscription(Self.id(for: channel))])
    }
}
