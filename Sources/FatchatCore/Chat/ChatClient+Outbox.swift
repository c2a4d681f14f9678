import Foundation
import RecordStore
import SyncEngine

/// A message of mine still going out: waiting to be sent, or failed for good.
public struct OutgoingMessage: Hashable, Sendable {
    /// The message as it will read once sent.
    public var message: Message
    /// Sending failed for good: it waits for `/retry` or `/discard`.
    public var failed: Bool
}

/// Where one message of mine stands on its way out.
public enum DeliveryState: Equatable, Sendable {
    /// Waiting to be sent, or being retried after a failure that passes.
    case pending
    /// Failed for good, and why; kept until retried or discarded.
    case failed(reason: String)
    /// Not waiting any more: it reached the shared file (or was never queued here).
    case sent
}

extension ChatClient {
    /// My messages still in the outbox, in the order they were queued: in one channel, or in all of them.
    public func outgoingMessages(in name: ChannelName? = nil) throws -> [OutgoingMessage] {
        try outgoing(in: name).map(\.outgoing)
    }

    /// The outbox's messages with the records to change while they are unsent, oldest first.
    func outgoing(in name: ChannelName?) throws -> [(outgoing: OutgoingMessage, record: Record)] {
        try engine.outboxEntries().compactMap { entry in
            guard let record = entry.record, var message = Message(record) else { return nil }
            if let name, message.channel != name.id { return nil }
            message.sender = user
            if case .failed = entry.state { return (OutgoingMessage(message: message, failed: true), record) }
            return (OutgoingMessage(message: message, failed: false), record)
        }
    }

    /// Where a message of mine stands.
    public func deliveryState(of id: MessageID) throws -> DeliveryState {
        switch try engine.state(of: id.recordID) {
        case .pending: .pending
        case .failed(_, let message): .failed(reason: message)
        case .sent: .sent
        }
    }

    /// Waits until nothing of mine is pending (failed changes do not count), at most `timeout` seconds.
    /// Returns whether nothing is pending.
    public func waitUntilSent(timeout: Double) -> Bool { engine.waitUntilSent(timeout: timeout) }

    /// Since when a write has been held up, typically by another process's lock, once that lasted a moment.
    public var waitingSince: Date? { engine.waitingSince }

    /// Why the engine could not reach the public database last time it tried; `nil` while it is online.
    public var offlineReason: String? { engine.offlineReason }

    /// Why nothing can be sent until someone mends the shared file; `nil` while sending can go on.
    public var blockingFailure: String? { engine.blockingFailure?.message }

    /// Puts every outgoing change that failed for good back in line; returns how many.
    @discardableResult
    public func retryFailed() throws -> Int {
        let failed = try failedOutgoing()
        for id in failed { try engine.retry(id) }
        return failed.count
    }

    /// Drops every outgoing change that failed for good; returns how many.
    @discardableResult
    public func discardFailed() throws -> Int {
        let failed = try failedOutgoing()
        for id in failed { try engine.discard(id) }
        return failed.count
    }

    /// Drops everything still going out, sent or not yet tried, failed or not; returns how many changes.
    @discardableResult
    public func discardOutgoing() throws -> Int {
        let all = try engine.outboxEntries().map(\.recordID)
        for id in all { try engine.discard(id) }
        return all.count
    }

    private func failedOutgoing() throws -> [RecordID] {
        try engine.outboxEntries().filter { if case .failed = $0.state { true } else { false } }.map(\.recordID)
    }
}
