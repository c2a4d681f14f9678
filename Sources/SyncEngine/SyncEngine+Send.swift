import Foundation
import RecordStore

extension SyncEngine {
    // MARK: What the app calls

    /// Puts changes in the durable outbox and wakes the sender. Returns once they are on disk.
    ///
    /// `savePolicy` is how the saves meet a stored copy: the default detects
    /// conflicts by change tag; `.changedKeys` suits records only this user
    /// writes piecemeal, such as a profile.
    public func send(saving records: [Record] = [], deleting ids: [RecordID] = [], savePolicy: SavePolicy = .ifServerRecordUnchanged) throws {
        try outbox.enqueue(saving: records, deleting: ids, savePolicy: savePolicy)
        sendWake.wake()
    }

    /// Puts changes of any kind in the durable outbox, in one commit and in this order, and wakes the sender.
    public func send(_ changes: [OutgoingChange]) throws {
        try outbox.enqueue(changes)
        sendWake.wake()
    }

    /// The outbox entry for one target record, if it waits there (pending or failed).
    public func outboxEntry(for id: RecordID) throws -> OutboxEntry? { try outbox.entry(for: id) }

    /// Everything in the outbox, oldest first.
    public func outboxEntries() throws -> [OutboxEntry] { try outbox.entries() }

    /// Where one outgoing change stands.
    public func state(of id: RecordID) throws -> OutboxState { try outbox.state(of: id) }

    /// Sends a failed change again.
    public func retry(_ id: RecordID) throws {
        try outbox.retry(id)
        sendWake.wake()
    }

    /// Drops a failed or pending change without sending it.
    public func discard(_ id: RecordID) throws {
        try outbox.discard(id)
        reportStatus(online: nil, reason: nil)
    }

    /// Waits until nothing is pending (failed entries do not count), or the timeout passes.
    /// Returns whether the outbox has nothing pending.
    public func waitUntilSent(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        idle.lock()
        defer { idle.unlock() }
        while true {
            if let pending = try? outbox.pending(limit: 1), pending.isEmpty { return true }
            // Waiting longer would not help: the shared file is refused until someone mends it.
            if Date() >= deadline || blockingFailure != nil { return false }
            _ = idle.wait(until: min(deadline, Date().addingTimeInterval(0.5)))
        }
    }

    // MARK: Sending

    /// Sends everything pending, batch by batch, and emits what each batch sent or what failed for good, before it returns.
    ///
    /// For an engine whose `automaticallySync` is off, as a test steps it.
    /// Throws the failure that stopped it, after settling and reporting what
    /// went before it and emitting the status that says the engine is offline.
    public func sendOnce() throws {
        var settlement = Settlement()
        while true {
            let step = sendStep(&settlement)
            if let failure = step.failure { throw failure }
            if !step.progressed { return }
        }
    }

    /// Sends one batch and settles what is due; on a failure, settles what went before it and reports the engine offline.
    /// Whatever the settlement still holds is settled once a step finds nothing more to send.
    private func sendStep(_ settlement: inout Settlement) -> (progressed: Bool, failure: (any Error)?) {
        do {
            let progressed = try sendBatch(adding: &settlement)
            if !settlement.isEmpty, !progressed || settlement.isDue { try settle(&settlement) }
            stoppingFailure.withLock { $0 = nil }
            return (progressed, nil)
        } catch {
            if let error = error as? StoreError { stoppingFailure.withLock { $0 = error.isTransient ? nil : error } }
            // What was sent before the failure is still settled, and reported.
            if !settlement.isEmpty { try? settle(&settlement) }
            reportStatus(online: false, reason: Self.reason(error))
            return (false, error)
        }
    }

    func sendLoop() {
        var backoff = configuration.initialBackoff
        var settlement = Settlement()
        var looks = SparedLooks()
        while isRunning {
            looks.reading(container.privateDatabase.filesStamp())
            let step = sendStep(&settlement)
            let retryAfter = backoff
            backoff = step.failure != nil ? min(backoff * 2, configuration.maximumBackoff) : configuration.initialBackoff
            idle.lock()
            idle.broadcast()
            idle.unlock()
            if step.failure != nil {
                if isRunning { _ = sendWake.wait(timeout: retryAfter) }
            } else if !step.progressed {
                // Idle: what this process queues wakes it. A look on the timer finds only what another process
                // of the user queued and left, which changes the private database's files.
                while isRunning, sendWake.wait(timeout: configuration.outboxPollInterval) == .timeout,
                      looks.spares(container.privateDatabase.filesStamp()) {}
            }
        }
        if !settlement.isEmpty { try? settle(&settlement) }
    }

    /// Writes what the sender is done with to the outbox, then reports it.
    private func settle(_ settlement: inout Settlement) throws {
        try outbox.settle(settlement)
        if settlement.changedSubscriptions { subscriptionsChanged() }
        for event in settlement.events { emit(event) }
        settlement = Settlement()
        reportStatus(online: true, reason: nil)
    }

    /// Sends up to one batch of the pending entries that `settlement` does not hold yet,
    /// and adds what it sent or what failed for good to it. Returns whether there was anything to send.
    /// Throws when the whole batch hit a transient failure, so the loop backs off.
    private func sendBatch(adding settlement: inout Settlement) throws -> Bool {
        let limit = RecordDatabase.maximumBatchSize
        let handled = settlement
        let entries = Array(try outbox.pending(limit: limit + handled.count).lazy.filter { !handled.contains($0) }.prefix(limit))
        guard !entries.isEmpty else { return false }
        let deletes = entries.filter { $0.operation == .delete }.map(\.recordID)
        // One operation per save policy; deletes go with the first.
        var result = ModifyResult()
        var deletesLeft = deletes
        for policy in SavePolicy.allCases {
            let group = entries.filter { $0.savePolicy == policy }.compactMap(\.record)
            guard !group.isEmpty || (policy == SavePolicy.allCases.last && !deletesLeft.isEmpty) else { continue }
            let part = try writingToPublic { try container.publicDatabase.modifyRecords(saving: group, deleting: deletesLeft, savePolicy: policy) }
            deletesLeft = []
            result.saveResults.merge(part.saveResults) { $1 }
            result.deleteResults.merge(part.deleteResults) { $1 }
        }

        var transient: StoreError?
        for entry in entries {
            if let problem = entry.unreadable {
                settlement.failed(entry, problem)
            } else if entry.operation == .subscribe || entry.operation == .unsubscribe {
                switch changeSubscription(entry) {
                case .success: settlement.subscribed(entry)
                case .failure(let error) where error.isTransient: transient = error
                case .failure(let error): settlement.failed(entry, error)
                }
            } else if let record = entry.record {
                switch result.saveResults[record.recordID] {
                case .success(let saved)?:
                    settlement.sent(entry, saved: saved)
                case .failure(let error)?:
                    if error.isTransient {
                        transient = error
                    } else if error.code == .batchRequestFailed {
                        // Never tried, because another item failed: it stays pending and goes in the next batch.
                        continue
                    } else if let server = alreadySent(record, error) {
                        settlement.sent(entry, saved: server)
                    } else if entry.createsOnly, error.code == .permissionFailure || error.code == .serverRecordChanged {
                        // Someone created it meanwhile: what this entry asked for is there.
                        settlement.sent(entry, saved: error.serverRecord ?? record)
                    } else {
                        settlement.failed(entry, error)
                    }
                case nil:
                    break
                }
            } else {
                switch result.deleteResults[entry.recordID] {
                case .success?:
                    settlement.sent(entry, saved: nil)
                case .failure(let error)?:
                    if error.isTransient {
                        transient = error
                    } else if error.code == .batchRequestFailed {
                        continue
                    } else if error.code == .unknownItem {
                        settlement.sent(entry, saved: nil)
                    } else {
                        settlement.failed(entry, error)
                    }
                case nil:
                    break
                }
            }
        }
        if let transient { throw transient }
        return true
    }

    /// Saves or deletes one of the owner's subscriptions; deleting one that is gone counts as done.
    private func changeSubscription(_ entry: OutboxEntry) -> Result<Void, StoreError> {
        let database = container.publicDatabase
        do {
            if let subscription = entry.subscription {
                _ = try writingToPublic { try database.save(subscription) }
            } else {
                try writingToPublic { try database.deleteSubscription(withID: String(entry.recordID.recordName.dropFirst(Outbox.subscriptionPrefix.count))) }
            }
            return .success(())
        } catch let error as StoreError where entry.subscription == nil && error.code == .unknownItem {
            return .success(())
        } catch let error as StoreError {
            return .failure(error)
        } catch {
            return .failure(StoreError(.internalError, "\(error)"))
        }
    }

    /// A resend after a crash finds its own earlier commit: that counts as sent.
    private func alreadySent(_ record: Record, _ error: StoreError) -> Record? {
        guard error.code == .serverRecordChanged, let server = error.serverRecord else { return nil }
        let me = container.currentUserRecordID
        if record.recordChangeTag == nil {
            return server.creatorUserRecordID == me && sameContent(server, record) ? server : nil
        }
        return server.lastModifiedUserRecordID == me && sameContent(server, record) ? server : nil
    }

    /// Compares fields, assets by content hash.
    private func sameContent(_ a: Record, _ b: Record) -> Bool {
        func normalized(_ value: FieldValue) -> FieldValue {
            switch value {
            case .asset(let asset): .string("asset:" + (asset.contentHash ?? asset.fileURL.path))
            case .list(let items): .list(items.map(normalized))
            default: value
            }
        }
        return a.fields.mapValues(normalized) == b.fields.mapValues(normalized)
    }

    // MARK: Waiting on the public database

    /// Runs a write to the public database, noting since when, so that the status can say what the engine waits for.
    func writingToPublic<T>(_ body: () throws -> T) rethrows -> T {
        let start = Date()
        noteWrite(start)
        defer { noteWrite(nil) }
        return try body()
    }

    private func noteWrite(_ start: Date?) {
        writeWatch.lock()
        publicWrite.withLock { $0 = start }
        writeWatch.broadcast()
        writeWatch.unlock()
    }

    /// Why the outbox cannot be sent at all, when that will not pass by itself: a public database
    /// that is refused (not Fatchat's, newer, damaged, a planted trigger) or that every batch fails on.
    ///
    /// Nothing is dropped meanwhile; the changes go out once the cause is mended.
    public var blockingFailure: StoreError? { stoppingFailure.withLock { $0 } }

    /// Why the last attempt to reach the public database failed, while the engine is offline: a server that is
    /// down or turned this client away, a vanished folder. `nil` while online.
    public var offlineReason: String? {
        lastStatus.withLock { status in status.flatMap { $0.online ? nil : $0.reason } }
    }

    /// When the write under way began, once it has taken long enough to be worth telling (another process holds the lock).
    public var waitingSince: Date? {
        publicWrite.withLock { $0 }.flatMap { Date().timeIntervalSince($0) >= Self.waitWorthTelling ? $0 : nil }
    }

    static let waitWorthTelling = 1.0

    /// Reports a write that is held up, once when it has taken a second, and again when it ends;
    /// it sleeps on a condition in between, so an idle engine costs nothing here.
    func watchLoop() {
        writeWatch.lock()
        defer { writeWatch.unlock() }
        while isRunning {
            guard let since = publicWrite.withLock({ $0 }) else {
                writeWatch.wait()
                continue
            }
            let due = since.addingTimeInterval(Self.waitWorthTelling)
            if Date() < due {
                _ = writeWatch.wait(until: due)
                continue
            }
            // Counted afresh: what is queued is part of what the wait holds up.
            writeWatch.unlock()
            reportStatus(online: nil, reason: nil)
            writeWatch.lock()
            while isRunning, publicWrite.withLock({ $0 }) == since { writeWatch.wait() }
            writeWatch.unlock()
            reportStatus(online: nil, reason: nil)
            writeWatch.lock()
        }
    }

    // MARK: Status

    /// Emits a status event when connectivity or the outbox counts changed.
    /// `online: nil` keeps the last known connectivity. The fetch loop passes
    /// `recount: false`: fetching does not change the outbox, so the last
    /// counts stand, and counting on every fetch would cost every client two
    /// queries per commit anyone makes.
    ///
    /// The outbox is counted, and the status emitted, under the same lock: the send loop and the
    /// watch on held-up writes both report, and a count one of them took before the other's must
    /// not be emitted after it, or the last status would say a line that was sent still waits.
    func reportStatus(online: Bool?, reason: String?, recount: Bool = true) {
        lastStatus.withLock { last in
            let fresh = recount || last == nil ? ((try? outbox.counts()) ?? (pending: 0, failed: 0)) : nil
            let counts = fresh ?? (pending: last?.pending ?? 0, failed: last?.failed ?? 0)
            let isOnline = online ?? last?.online ?? true
            let status = SyncStatus(online: isOnline, pending: counts.pending, failed: counts.failed,
                                    reason: isOnline ? nil : (reason ?? last?.reason), waitingSince: waitingSince)
            guard status != last else { return }
            last = status
            emit(.status(status))
        }
    }
}
