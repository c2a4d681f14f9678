import Foundation
import RecordStore

/// The query subscriptions that joining a channel saves: new messages in that channel.
struct Subscriptions {
    let client: ChatClient

    /// The subscription ID for a channel; one per user and channel.
    static func id(for channel: Channel) -> String { "messages.\(channel.name.key)" }

    func subscribe(to channel: Channel) throws {}

    func unsubscribe(from channel: Channel) throws {}
}
