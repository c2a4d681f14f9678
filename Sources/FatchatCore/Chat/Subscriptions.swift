import Foundation
import RecordStore

/// The query subscription that joining a channel saves: new messages in it from anyone else.
struct Subscriptions {
    let client: ChatClient

    /// The subscription ID for a channel; one per user and channel.
    static func id(for channel: Channel) -> String { "messages.\(channel.name.key)" }

    func subscribe(to channel: Channel) throws {
        let predicate = try QueryPredicate(format: "channel == %@ AND creatorUserRecordID != %@", channel.recordID, client.user)
        let info = NotificationInfo(alertLocalizationKey: "message_alert", alertLocalizationArgs: ["handle", "text", "channelName"],
                                    shouldBadge: true, desiredKeys: ["channelName", "handle", "text"])
        // Through the outbox, like the membership: another process's lock on the file holds up no one.
        try client.engine.send([.saveSubscription(Subscription(
            subscriptionID: Self.id(for: channel), recordType: ChatSchema.messageType, predicate: predicate,
            options: [.firesOnRecordCreation], notificationInfo: info))])
    }

    func unsubscribe(from channel: Channel) throws {
        try client.engine.send([.deleteSubscription(Self.id(for: channel))])
    }
}
