import Foundation
import RecordStore
import SyncEngine

/// What happened in the chat, as the client and the bot show it.
public enum ChatEvent: Sendable {
    /// A new message in any channel.
    case message(Message)
    /// A message was edited.
    case messageEdited(Message)
    case messageDeleted(MessageID)
    /// Someone added or took off a reaction to a message; ``ChatClient/reactions(to:)`` reads them now.
    case reactionsChanged(MessageID)
    /// A channel appeared or its topic changed.
    case channelChanged(Channel)
    /// A channel was deleted, with everything in it.
    case channelDeleted(name: String, id: ChannelID)
    /// Someone joined or left a channel.
    case membersChanged(channel: ChannelID)
    /// A subscription of mine matched someone else's message; a view renders its alert with the sender labelled.
    case notification(ChatNotification)
    /// Something I sent failed for good, and why; it stays in the outbox until retried or discarded.
    ///
    /// The ID is a message's when a message failed; a join, a topic or a
    /// channel that failed has an ID that matches no message.
    case sendFailed(MessageID, reason: String)
    /// Something I sent reached the shared file; a message's ID matches it.
    ///
    /// A batch sends one of these per change: the outbox counts come with
    /// ``status(_:)``, which follows the batch, not with these.
    case sent(MessageID)
    /// Connectivity and outbox counts: the one source of them.
    case status(ChatStatus)
    /// History was lost (the change token expired); views should reload.
    case reload
    /// A row of the shared file did not decode and was skipped: an inert line to show once.
    case damagedRowSkipped(String)
    /// Someone's published key changed since this user last saw it: an inert line to show once.
    case keyChanged(String)
    /// A direct message to or from me, opened.
    case directMessage(DirectMessage)
    /// Someone's presence was written: online, away, offline (mine included).
    case presence(Presence)
    /// Someone is typing in a channel (me included, from another terminal): ephemeral, never a message.
    case typing(TypingNotice)
}

extension ChatEvent {
    /// The chat's reading of one sync event.
    /// `reading` makes a message of a record, checking its signature; by default a record's signature is not looked at.
    /// `opening` opens a direct message to or from me; by default none is opened.
    static func from(_ event: SyncEvent, reading: (Record) -> Message? = Message.init,
                     opening: (Record) -> DirectMessage? = { _ in nil },
                     presence: (Record) -> Presence? = Presence.init,
                     typing: (Record) -> TypingNotice? = TypingNotice.init) -> [ChatEvent] {
        switch event {
        case .recordsChanged(let records):
            return records.compactMap { record in
                switch record.recordType {
                case ChatSchema.messageType:
                    return reading(record).map { $0.edited ? .messageEdited($0) : .message($0) }
                case ChatSchema.channelType:
                    return Channel(record).map(ChatEvent.channelChanged)
                case ChatSchema.directMessageType:
                    return opening(record).map(ChatEvent.directMessage)
                case Presence.recordType:
                    return presence(record).map(ChatEvent.presence)
                case TypingNotice.recordType:
                    return typing(record).map(ChatEvent.typing)
                case ChatSchema.membershipType:
                    return record["channel"]?.referenceValue.map { .membersChanged(channel: ChannelID($0.recordID)) }
                case ChatSchema.reactionType:
                    return Reaction.read(record).map { .reactionsChanged($0.message) }
                default:
                    return nil
                }
            }
        case .recordsDeleted(let deleted):
            return deleted.compactMap { item in
                switch item.recordType {
                case ChatSchema.messageType, ChatSchema.directMessageType: .messageDeleted(MessageID(item.recordID))
                case ChatSchema.channelType: .channelDeleted(name: String(item.recordID.recordName.dropFirst("channel.".count)), id: ChannelID(item.recordID))
                case ChatSchema.reactionType: Reaction.message(inName: item.recordID.recordName).map(ChatEvent.reactionsChanged)
                default: nil
                }
            }
        case .sent(let saved, let deleted):
            return saved.map { .sent(MessageID($0.recordID)) } + deleted.map { .sent(MessageID($0)) }
        case .sendFailed(let id, let error):
            return [.sendFailed(MessageID(id), reason: error.message)]
        case .status(let status):
            return [.status(ChatStatus(status))]
        case .changeTokenExpired:
            return [.reload]
        case .damagedRowSkipped(let line):
            return [.damagedRowSkipped(line)]
        case .keyChanged(let line):
            return [.keyChanged(line)]
        case .notification(let notification):
            return ChatNotification(notification).map { [.notification($0)] } ?? []
        }
    }
}

/// Whether the chat can reach the shared file, and what of mine waits to go out.
public struct ChatStatus: Sendable, Equatable {
    /// The last attempt to reach the shared file worked.
    public var online: Bool
    /// Changes of mine waiting to be sent.
    public var pending: Int
    /// Changes of mine that failed for good and wait for `/retry` or `/discard`.
    public var failed: Int
    /// Since when a write has been held up, typically by another process's lock on the file.
    public var waitingSince: Date?

    public init(online: Bool, pending: Int, failed: Int, waitingSince: Date? = nil) {
        (self.online, self.pending, self.failed, self.waitingSince) = (online, pending, failed, waitingSince)
    }

    init(_ status: SyncStatus) {
        self.init(online: status.online, pending: status.pending, failed: status.failed, waitingSince: status.waitingSince)
    }
}
