import Foundation
import RecordStore

extension SyncEngine {
    private var tokenRecordID: RecordID { RecordID(recordName: "syncState-\(configuration.clientName)") }

    /// The position this client last saved, if any.
    func savedToken() -> ChangeToken? {
        guard let record = try? container.privateDatabase.record(for: tokenRecordID),
              let data = record["token"]?.bytesValue else { return nil }
        return try? ChangeToken(data: data)
    }

    /// Saves the token at most once a second while changes stream in; `force` saves now.
    /// A crash between saves re-delivers at most a second of events, which delivery
    /// at least once allows; receivers no longer pay a private-database commit per message.
    func saveTokenThrottled(_ token: ChangeToken, force: Bool = false) throws {
        let due = fetchState.withLock { state in
            state.unsaved = token
            guard force || Date().timeIntervalSince(state.lastSave) >= 1 else { return false }
            state.lastSave = Date()
            state.unsaved = nil
            return true
        }
        if due { try saveToken(token) }
    }

    /// Saves a token that the throttle held back; called when the loop idles or stops.
    func flushToken() {
        let pending = fetchState.withLock { state -> ChangeToken? in
            defer { state.unsaved = nil; state.lastSave = Date() }
            return state.unsaved
        }
        if let pending { try? saveToken(pending) }
    }

    /// The owner's subscriptions, reloaded at most once a second (another terminal may have joined a channel); orphans are dropped.
    func currentSubscriptions() throws -> [Subscription] {
        if let cached = fetchState.withLock({ state in
            state.subscriptionsLoaded.map { Date().timeIntervalSince($0) < 1 } == true ? state.subscriptions : nil
        }) { return cached }
        let loaded = try container.publicDatabase.liveSubscriptions()
        fetchState.withLock { state in
            state.subscriptions = loaded
            state.subscriptionsLoaded = Date()
        }
        return loaded
    }

    /// Tells the engine that the owner's subscriptions changed, so the next batch reads them afresh.
    public func subscriptionsChanged() {
        fetchState.withLock { $0.subscriptionsLoaded = nil }
    }

    func saveToken(_ token: ChangeToken) throws {
        var record = Record(recordType: "SyncState", recordID: tokenRecordID)
        record["token"] = .bytes(token.data)
        try container.privateDatabase.save(record, savePolicy: .allKeys)
    }

    /// Waits for changes and fetches them, until the engine stops.
    func fetchLoop() {
        var signal: ChangeSignal?
        var token = configuration.resumeFromSavedToken ? savedToken() : nil
        var needsFetch = true
        var wake = ChangeWatcher.Wake.woken
        var recheck = Recheck()
        while isRunning {
            do {
                if signal == nil { signal = try container.publicDatabase.makeChangeSignal() }
                let changed = try signal?.hasChanged() == true
                if changed { needsFetch = true }
                recheck.note(wake, changed: changed)
                if needsFetch {
                    token = try fetchAll(from: token)
                    needsFetch = false
                    reportStatus(online: true, reason: nil, recount: false)
                }
            } catch let error as StoreError {
                signal = nil
                needsFetch = true
                reportStatus(online: false, reason: error.message, recount: false)
            } catch {
                signal = nil
                needsFetch = true
                reportStatus(online: false, reason: "\(error)", recount: false)
            }
            if !isRunning { break }
            // Quiet after a burst: save what the token throttle held back, after a short wait for more.
            let flushDue = !needsFetch && fetchState.withLock { $0.unsaved != nil }
            wake = watcher.wait(timeout: recheck.delay ?? (needsFetch || flushDue ? min(pollInterval, 1) : pollInterval))
            if wake == .timeout, flushDue, recheck.delay == nil { flushToken() }
        }
        flushToken()
    }

    /// Fetches every batch since `token`, emits its events, then saves the new token.
    private func fetchAll(from start: ChangeToken?) throws -> ChangeToken {
        let database = container.publicDatabase
        var token: ChangeToken
        if let start {
            token = start
        } else if configuration.startFromBeginning {
            token = try database.fetchChanges(since: nil, limit: 1).token
            token = try fetchBatches(from: nil) ?? token
            return token
        } else {
            token = try database.currentChangeToken()
            try saveToken(token)
            return token
        }
        return try fetchBatches(from: token) ?? token
    }

    /// Runs the owner's subscriptions over the changes and emits what fired; spent `firesOnce` subscriptions and orphans are deleted.
    private func notify(about changes: [RecordChange]) throws {
        guard !changes.isEmpty else { return }
        let database = container.publicDatabase
        let subscriptions = try currentSubscriptions()
        guard !subscriptions.isEmpty else { return }
        let evaluation = Subscription.evaluate(changes, subscriptions: subscriptions, strings: configuration.alertStrings)
        for notification in evaluation.notifications { emit(.notification(notification)) }
        if !evaluation.subscriptionsToDelete.isEmpty {
            let spent = Set(evaluation.subscriptionsToDelete)
            for subscription in subscriptions where spent.contains(subscription.subscriptionID) { _ = try? database.delete(subscription) }
            fetchState.withLock { $0.subscriptions.removeAll { spent.contains($0.subscriptionID) } }
        }
    }

    /// Returns the last token reached, or `nil` if nothing was fetched.
    private func fetchBatches(from start: ChangeToken?) throws -> ChangeToken? {
        let database = container.publicDatabase
        var token = start
        var fetchedAny = false
        while isRunning {
            let batch: ChangeBatch
            do {
                batch = try database.fetchChanges(since: token, limit: RecordDatabase.maximumBatchSize)
            } catch let error as StoreError where error.code == .changeTokenExpired {
                let fresh = try database.currentChangeToken()
                let refetched = try configuration.refetch?(database) ?? []
                emit(.changeTokenExpired(refetched: refetched))
                // The skipped changes may have deleted a subscription's parent: check the parents again.
                subscriptionsChanged()
                try saveToken(fresh)
                return fresh
            }
            if !batch.changedRecords.isEmpty { emit(.recordsChanged(batch.changedRecords)) }
            if !batch.deletedRecords.isEmpty { emit(.recordsDeleted(batch.deletedRecords)) }
            try notify(about: batch.changes)
            if batch.token != token {
                try saveTokenThrottled(batch.token)
            }
            token = batch.token
            fetchedAny = true
            if !batch.moreComing { break }
        }
        return fetchedAny ? token : start
    }
}

/// When the fetch loop should look again soon, although nothing woke it.
///
/// A filesystem event may come from a commit still being written, which is not
/// visible yet; once it is, no further event follows. So after an event with no
/// visible change the loop looks again: every millisecond at first, then less
/// often, for about 40 ms in all, rather than waiting for the next commit or
/// the poll timer. The first steps are short because the writer is often only
/// a moment behind, or was put off the CPU by the readers its first write woke.
struct Recheck {
    /// The waits, in seconds, after an event with nothing visible.
    static let schedule: [Double] = [0.001, 0.001, 0.001, 0.001, 0.001, 0.002, 0.002, 0.004, 0.008, 0.016]

    /// How many waits of the schedule were used; `nil` when not rechecking.
    private var step: Int?

    /// Seconds until the next look, or `nil` for none.
    var delay: Double? { step.map { Self.schedule[$0] } }

    /// Takes in how the loop woke and whether it then saw a change.
    mutating func note(_ wake: ChangeWatcher.Wake, changed: Bool) {
        if changed || wake == .woken {
            step = nil
        } else if let step {
            self.step = step + 1 < Self.schedule.count ? step + 1 : nil
        } else if wake == .filesystem {
            step = 0
        }
    }
}
