import Foundation
import RecordStore

/// Whether the engine can reach the public database, and what waits to be sent.
public struct SyncStatus: Sendable, Equatable {
    /// The last attempt to reach the public database worked.
    public var online: Bool
    /// Changes in the outbox waiting to be sent.
    public var pending: Int
    /// Changes that failed for good and wait for the app to retry or discard them.
    public var failed: Int
    /// Why the engine is offline, if it is.
    public var reason: String?
    /// Since when a write to the public database has been held up, typically by another process's lock.
    public var waitingSince: Date?

    public init(online: Bool, pending: Int, failed: Int, reason: String? = nil, waitingSince: Date? = nil) {
        self.online = online
        self.pending = pending
        self.failed = failed
        self.reason = reason
        self.waitingSince = waitingSince
    }
}

/// What the sync engine tells the app, one event at a time.
public enum SyncEvent: Sendable {
    /// Records created or changed by anyone, this process included, in their current state.
    case recordsChanged([Record])
    /// Records deleted by anyone, cascades included.
    case recordsDeleted([DeletedRecord])
    /// One of the owner's subscriptions matched a change.
    case notification(SubscriptionNotification)
    /// Outgoing changes that reached the public database.
    case sent(saved: [Record], deleted: [RecordID])
    /// An outgoing change failed for good; it stays in the outbox until retried or discarded.
    case sendFailed(RecordID, StoreError)
    /// Connectivity or the outbox changed.
    case status(SyncStatus)
    /// The saved change token had expired: the engine started again from now,
    /// after handing over what the app's refetch returned.
    case changeTokenExpired(refetched: [Record])
    /// A row of the shared file did not decode and was skipped: one inert line, once per row (see ``DamagedRowLog``).
    case damagedRowSkipped(String)
    /// An account's published key is not the one this user saw before: one line, once per change (see ``AccountKeys``).
    case keyChanged(String)
}
