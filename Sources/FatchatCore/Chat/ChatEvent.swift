import Foundation
import RecordStore
import SyncEngine

/// What happened in the chat, as the client and the bot show it.
public enum ChatEvent: Sendable {
    /// A new message in any channel.
    case message(Message)
    /// A message was edited.
    case messageEdited(Message)
    case messageDeleted(RecordID)
    /// A channel appeared or its topic changed.
    case channelChanged(Channel)
    /// A channel was deleted, with everything in it.
    case channelDeleted(name: String, recordID: RecordID)
    /// Someone joined or left a channel.
    case membersChanged(channel: RecordID)
    /// A subscription of mine matched someone else's message; a view renders its alert with the sender labelled.
    case notification(ChatNotification)
    /// Something I sent failed for good; it stays in the outbox until retried or discarded.
    case sendFailed(RecordID, StoreError)
    /// Something I sent reached the public database.
    case sent(RecordID)
    /// Connectivity and outbox counts.
    case status(SyncStatus)
    /// History was lost (the change token expired); views should reload.
    case reload
    /// A row of the shared file did not decode and was skipped: an inert line to show once.
    case damagedRowSkipped(String)
}

extension ChatEvent {
    /// The chat's reading of one sync event.
    public static func from(_ event: SyncEvent) -> [ChatEvent] {
        switch event {
        case .recordsChanged(let records):
            return records.compactMap { record in
                switch record.recordType {
                case ChatSchema.messageType:
                    return Message(record).map { $0.edited ? .messageEdited($0) : .message($0) }
                case ChatSchema.channelType:
                    return Channel(record).map(ChatEvent.channelChanged)
                case ChatSchema.membershipType:
                    return record["channel"]?.referenceValue.map { .membersChanged(channel: $0.recordID) }
                default:
                    return nil
                }
            }
        case .recordsDeleted(let deleted):
            return deleted.compactMap { item in
                switch item.recordType {
                case ChatSchema.messageType: .messageDeleted(item.recordID)
                case ChatSchema.channelType: .channelDeleted(name: String(item.recordID.recordName.dropFirst("channel.".count)), recordID: item.recordID)
                default: nil
                }
            }
        case .sent(let saved, let deleted):
            return saved.map { .sent($0.recordID) } + deleted.map { .sent($0) }
        case .sendFailed(let id, let error):
            return [.sendFailed(id, error)]
        case .status(let status):
            return [.status(status)]
        case .changeTokenExpired:
            return [.reload]
        case .damagedRowSkipped(let line):
            return [.damagedRowSkipped(line)]
        case .notification(let notification):
            return ChatNotification(notification).map { [.notification($0)] } ?? []
        }
    }
}
