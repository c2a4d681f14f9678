import Foundation
import RecordStore

/// Entries the sender is done with (sent, or failed for good) whose outbox records
/// are not yet removed or marked, with the events that report them.
///
/// The sender gathers them and settles them in one private commit when it runs
/// out of work, has gathered a batch, or has held them for a tenth of a second,
/// instead of one commit per batch sent; the events go out after that commit,
/// so whoever sees `sent` finds the outbox without the entry. Until then the
/// entries still read as pending, so the sender skips them itself; a crash in
/// between resends them, and the resend is recognized as already sent.
struct Settlement {
    /// By outbox record: the latest entry handled for it, and its failure if it failed.
    private(set) var handled: [RecordID: (entry: OutboxEntry, error: StoreError?)] = [:]
    private(set) var saved: [Record] = []
    private(set) var deleted: [RecordID] = []
    /// Whether one of the owner's subscriptions was saved or deleted.
    private(set) var changedSubscriptions = false
    private var since: ContinuousClock.Instant?

    var count: Int { handled.count }
    var isEmpty: Bool { handled.isEmpty }

    /// Whether to settle now: a batch is gathered, or the oldest entry has waited long enough.
    var isDue: Bool {
        count >= RecordDatabase.maximumBatchSize || since.map { ContinuousClock.now - $0 >= .milliseconds(100) } == true
    }

    /// An entry that was sent; `saved` is the record as stored, `nil` for a delete.
    mutating func sent(_ entry: OutboxEntry, saved record: Record?) {
        add(entry, failure: nil)
        if let record { saved.append(record) } else { deleted.append(entry.recordID) }
    }

    /// A subscription change that was made; it has no record to report.
    mutating func subscribed(_ entry: OutboxEntry) {
        add(entry, failure: nil)
        changedSubscriptions = true
    }

    mutating func failed(_ entry: OutboxEntry, _ error: StoreError) {
        add(entry, failure: error)
    }

    private mutating func add(_ entry: OutboxEntry, failure: StoreError?) {
        if since == nil { since = .now }
        handled[entry.item.recordID] = (entry, failure)
    }

    /// Whether this very entry (not a later replacement of it) was handled already.
    func contains(_ entry: OutboxEntry) -> Bool {
        handled[entry.item.recordID]?.entry.item.recordChangeTag == entry.item.recordChangeTag
    }

    /// The events that report what was settled: what was sent, then each failure.
    var events: [SyncEvent] {
        var events: [SyncEvent] = []
        if !saved.isEmpty || !deleted.isEmpty { events.append(.sent(saved: saved, deleted: deleted)) }
        let failures = handled.values.compactMap { handled in handled.error.map { (entry: handled.entry, error: $0) } }
        for failure in failures.sorted(by: { $0.entry.order < $1.entry.order }) {
            events.append(.sendFailed(failure.entry.recordID, failure.error))
        }
        return events
    }
}
