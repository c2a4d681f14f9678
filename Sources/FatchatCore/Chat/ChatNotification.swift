import FatchatResources
import Foundation
import RecordStore

/// A subscription of mine fired for someone else's message: what it says, and who really sent it.
///
/// The alert is not taken ready-made from the subscription: its sender part
/// would show a copied handle bare. Each view renders it with the sender as it
/// labels message lines (``AccountDirectory``), so `alice (bob): hi (in #ops)`.
public struct ChatNotification: Sendable, Hashable {
    /// The alert formats, as the engine renders other alerts.
    static let alertStrings = AlertStrings(FatchatResources.alertFormats)

    /// The message that raised it.
    public var messageID: MessageID
    /// The channel's name as the message gives it, if it does.
    public var channel: String?
    /// The handle the message was sent under.
    public var handle: String
    /// The sender's account (a user record name): the record's creator, which no handle can fake; empty if unknown.
    public var user: String
    /// The message's text.
    public var text: String
    /// Whether it should raise the unread badge.
    public var badge: Bool

    /// Reads a message notification; `nil` for any other kind, as the chat subscribes to messages only.
    init?(_ notification: SubscriptionNotification) {
        guard notification.recordType == ChatSchema.messageType else { return nil }
        let creator = notification.creatorUserRecordID?.recordName
        messageID = MessageID(notification.recordID)
        channel = notification.fields["channelName"]?.stringValue
        handle = notification.fields["handle"]?.stringValue ?? creator ?? "?"
        user = creator ?? ""
        text = notification.fields["text"]?.stringValue ?? ""
        badge = notification.shouldBadge
    }

    /// The alert with `sender` (the label a view gives ``handle`` and ``user``) as its sender part.
    public func alert(sender: String) -> String {
        Self.alertStrings.render("message_alert", [sender, text, channel ?? ""])
    }
}
