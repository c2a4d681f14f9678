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
        try client.container.publicDatabase.save(Subscription(
            subscriptionID: Self.id(for: channel), recordType: ChatSchema.messageType, predicate: predicate,
            options: [.firesOnRecordCreation], notificationInfo: info))
        client.engine.subscriptionsChanged()
    }

    func unsubscribe(from channel: Channel) throws {
        do {
            try client.container.publicDatabase.deleteSubscription(withID: Self.id(for: channel))
            client.engine.subscriptionsChanged()
        } catch let error as StoreError where error.code == .unknownItem {
            return
        }
    }
}
