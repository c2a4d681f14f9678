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

    /// Notes `token` as delivered; saves it once the oldest delivery not saved is `tokenSaveDelay` old,
    /// or `ephemeralTokenSaveDelay` for a delivery of ephemeral changes alone.
    ///
    /// A save is a private-database write of about 400 k instructions, more than a
    /// delivery's fetch (BENCHMARKS.md, ninth round), so it is not paid per message.
    func saveTokenThrottled(_ token: ChangeToken, ephemeral: Bool) throws {
        let now = Date()
        let due = fetchState.withLock { state in
            state.unsaved = token
            let asked = now.addingTimeInterval(ephemeral ? configuration.ephemeralTokenSaveDelay : configuration.tokenSaveDelay)
            state.unsavedDue = min(state.unsavedDue ?? asked, asked)
            return state.tokenSaveDue(now) == 0
        }
        if due { try saveHeldToken() }
    }

    /// Seconds until the held-back position is due to be saved; `nil` when none is held back.
    func tokenSaveDue() -> Double? {
        fetchState.withLock { $0.tokenSaveDue(Date()) }
    }

    /// Saves the position that the throttle held back, if any.
    private func saveHeldToken() throws {
        let pending = fetchState.withLock { state -> ChangeToken? in
            defer { state.unsaved = nil; state.unsavedDue = nil }
            return state.unsaved
        }
        if let pending { try saveToken(pending) }
    }

    /// `saveHeldToken`, for when the loop idles or stops, where a failure has no one to tell.
    func flushToken() {
        try? saveHeldToken()
    }

    /// The owner's subscriptions, read again once `subscriptionRefresh` has passed (or, for a batch of
    /// `ephemeral` changes alone, only if they were never read); orphans are dropped.
    ///
    /// A read costs more than a delivery's fetch, so it is not paid per message: within that
    /// time, only this process's own changes and a skipped stretch of the feed reload them.
    func currentSubscriptions(ephemeral: Bool = false) throws -> [Subscription] {
        if let cached = fetchState.withLock({ state in
            state.subscriptionsLoaded.map { ephemeral || Date().timeIntervalSince($0) < configuration.subscriptionRefresh } == true
                ? state.subscriptions : nil
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

    /// Fetches everything since the last pass and emits its events before it returns, then saves the position.
    ///
    /// For an engine whose `automaticallySync` is off, as a test steps it;
    /// called before `start()`, it also fixes where the fetch loop begins. With
    /// no saved position and `startFromBeginning` off, the first pass only
    /// takes the position "now": what is committed after it, the next pass
    /// delivers. Throws what stopped the pass, after emitting the status that
    /// says the engine is offline.
    public func fetchOnce() throws {
        do {
            try fetchAll(byHand: true)
            reportStatus(online: true, reason: nil, recount: false)
        } catch {
            reportStatus(online: false, reason: Self.reason(error), recount: false)
            throw error
        }
        flushToken()
    }

    /// What a status says about a failure.
    static func reason(_ error: any Error) -> String {
        (error as? StoreError)?.message ?? "\(error)"
    }

    /// Waits for changes and fetches them, until the engine stops.
    ///
    /// It first fixes where the feed is read from and signals `positioned`, which `start()` waits for:
    /// "now" taken later than a commit made just after `start()` would pass over that commit. Should
    /// that fail, the first pass tries again and reports why.
    func fetchLoop(positioned: DispatchSemaphore) {
        try? fetchCursor.withLock { cursor in _ = try takeStartingPosition(&cursor) }
        positioned.signal()
        var signal: ChangeSignal?
        var needsFetch = true
        var wake = ChangeWatcher.Wake.woken
        var recheck = Recheck()
        var looks = SparedLooks()
        var quick = QuickLooks(interval: quickLookInterval, pollInterval: pollInterval)
        var lookIsQuick = false
        while isRunning {
            do {
                if signal == nil {
                    signal = try container.publicDatabase.makeChangeSignal()
                    signal?.onPush { [watcher] in watcher.wake() }
                }
                let changed: Bool
                var bell: DatabaseFilesStamp?
                if wake == .committed, signal?.readsWhenAsked == false {
                    // A bell is rung once a commit is visible, so the signal is not asked: its read costs about
                    // a quarter of a fetch (BENCHMARKS.md, twentieth round). A bell rung by anyone else costs a fetch.
                    // The log engine's signal is asked all the same: its answer is what reads the logs.
                    changed = true
                } else {
                    // The timer's look, with no recheck under way, is spared at files that have not changed;
                    // only it takes a stamp, so a filesystem event's look pays no `stat`. Where quick looks
                    // are made, every look notes the bell, and a quick look is spared at one that has not rung.
                    let timerLook = wake == .timeout && recheck.delay == nil
                    let (stamp, mostSpared) = quick.interval == nil
                        ? (timerLook ? container.publicDatabase.filesStamp() : nil, SparedLooks.mostSpared)
                        : quick.stamp(of: container.publicDatabase, quickLook: timerLook && lookIsQuick)
                    if quick.interval != nil { bell = stamp }
                    if timerLook, looks.spares(stamp, atMost: mostSpared) {
                        changed = false
                    } else {
                        looks.reading(stamp)
                        changed = try signal?.hasChanged() == true
                    }
                }
                if changed { needsFetch = true }
                recheck.note(wake, changed: changed)
                quick.note(changed: changed, byTimer: wake == .timeout, bell: bell)
                if needsFetch {
                    try fetchAll(byHand: false)
                    needsFetch = false
                    reportStatus(online: true, reason: nil, recount: false)
                }
            } catch {
                signal = nil
                needsFetch = true
                reportStatus(online: false, reason: Self.reason(error), recount: false)
            }
            if !isRunning { break }
            let quickDelay = recheck.delay == nil && !needsFetch ? quick.delay : nil
            lookIsQuick = quickDelay != nil
            let look = recheck.delay ?? (needsFetch ? min(pollInterval, 1) : quickDelay ?? pollInterval)
            wake = watcher.wait(timeout: min(look, tokenSaveDue() ?? look))
            // Quiet after deliveries: the position they reached is saved once it is due.
            if tokenSaveDue() == 0 { flushToken() }
        }
        flushToken()
    }

    /// Fetches every batch after the cursor's token and emits its events; the token moves past each batch as soon as it is delivered.
    ///
    /// The token is updated even when this throws part way: a retry after a
    /// failure must start after what was already emitted, or every retry would
    /// deliver the same batch again. (A subscription row that did not decode
    /// once made every engine re-deliver one batch per wake-up, and its own
    /// reads woke it: one post became thousands of events.)
    ///
    /// A pass by hand (`fetchOnce()`) runs to its end; the loop's ends early when the engine stops.
    private func fetchAll(byHand: Bool) throws {
        try fetchCursor.withLock { cursor in
            if try takeStartingPosition(&cursor) { return }
            try fetchBatches(&cursor.token, delivered: &cursor.delivered, byHand: byHand)
        }
    }

    /// Where the feed is read from, fixed once: the saved position, or else (unless `startFromBeginning`)
    /// the newest commit, which is saved as this client's position. Returns whether it took "now", as
    /// there is then nothing to fetch yet.
    private func takeStartingPosition(_ cursor: inout FetchCursor) throws -> Bool {
        if !cursor.started {
            cursor.token = configuration.resumeFromSavedToken ? savedToken() : nil
            cursor.started = true
        }
        guard cursor.token == nil, !configuration.startFromBeginning else { return false }
        let now = try container.publicDatabase.currentChangeToken()
        cursor.token = now
        try saveToken(now)
        return true
    }

    /// The record types the owner's query subscriptions look at, whose updates the feed reads with their
    /// previous fields (to tell a record that stopped matching), as last loaded; every type until they are
    /// loaded. Not a reason to load them: a fetch that finds nothing never reads them.
    private func queriedTypes() -> Set<String>? {
        fetchState.withLock { state in
            guard state.subscriptionsLoaded != nil else { return nil }
            return Set(state.subscriptions.compactMap { if case .query(let type, _, _, _) = $0.kind { type } else { nil } })
        }
    }

    /// The notifications the owner's subscriptions raise for `changes`: at most one per change, and one per record and reason,
    /// whatever the stored subscriptions or change rows say.
    private func notifications(for changes: [RecordChange], ephemeral: Bool) throws -> SubscriptionEvaluation? {
        guard !changes.isEmpty else { return nil }
        let subscriptions = try currentSubscriptions(ephemeral: ephemeral)
        guard !subscriptions.isEmpty else { return nil }
        var evaluation = Subscription.evaluate(changes, subscriptions: subscriptions, strings: configuration.alertStrings, atMostOnePerChange: true)
        var raised: [RecordID: Set<SubscriptionNotification.Reason>] = [:]
        evaluation.notifications.removeAll { !raised[$0.recordID, default: []].insert($0.reason).inserted }
        return evaluation
    }

    /// Deletes the `firesOnce` subscriptions that fired, and orphans only while they are still tied to their gone parent.
    private func deleteSpent(_ evaluation: SubscriptionEvaluation) {
        guard !evaluation.subscriptionsToDelete.isEmpty else { return }
        let spent = Set(evaluation.subscriptionsToDelete)
        for subscription in (try? currentSubscriptions()) ?? [] where spent.contains(subscription.subscriptionID) {
            _ = try? container.publicDatabase.delete(subscription)
        }
        fetchState.withLock { $0.subscriptions.removeAll { spent.contains($0.subscriptionID) } }
    }

    /// Fetches and delivers batches from `token` (the beginning when `nil`) until no more are coming.
    private func fetchBatches(_ token: inout ChangeToken?, delivered: inout DeliveredVersions, byHand: Bool) throws {
        let database = container.publicDatabase
        while byHand || isRunning {
            var batch: ChangeBatch
            do {
                batch = try database.fetchChanges(since: token, limit: RecordDatabase.maximumBatchSize, previousFieldsOf: queriedTypes(),
                                                  passingOver: passedOver.withLock { $0 })
            } catch let error as StoreError where error.code == .changeTokenExpired {
                let fresh = try database.currentChangeToken()
                let refetched = try configuration.refetch?(database) ?? []
                emit(.changeTokenExpired(refetched: refetched))
                token = fresh
                // The skipped changes may have deleted a subscription's parent: check the parents again.
                subscriptionsChanged()
                try saveToken(fresh)
                return
            }
            // A record version delivered before comes again only through change rows written by hand.
            batch.changedRecords.removeAll { delivered.contains($0) }
            batch.changes.removeAll { delivered.contains($0) }
            let ephemeral = !configuration.ephemeralRecordTypes.isEmpty
                && batch.changes.allSatisfy { configuration.ephemeralRecordTypes.contains($0.recordType) }
            // Whatever can fail runs before the first event, so a batch is delivered whole and once.
            let evaluation = try notifications(for: batch.changes, ephemeral: ephemeral)
            if !batch.changedRecords.isEmpty { emit(.recordsChanged(batch.changedRecords)) }
            if !batch.deletedRecords.isEmpty { emit(.recordsDeleted(batch.deletedRecords)) }
            for notification in evaluation?.notifications ?? [] { emit(.notification(notification)) }
            let previous = token
            token = batch.token
            batch.changes.forEach { delivered.insert($0) }
            if let evaluation { deleteSpent(evaluation) }
            if batch.token != previous {
                try saveTokenThrottled(batch.token, ephemeral: ephemeral)
            }
            if !batch.moreComing { break }
        }
    }
}

/// The record versions (ID and change tag) the fetch loop delivered lately, with the kinds of change it delivered them for.
///
/// A save gives a record a new change tag, so a version that comes again for
/// the same kind of change came from change rows that someone wrote into the
/// file by hand; it is not delivered twice. The memory is bounded: past
/// `capacity` records, the older half is forgotten, and at worst an old
/// version is delivered once more, which at-least-once delivery allows.
struct DeliveredVersions {
    static let capacity = 20_000
    private var versions: [RecordID: (tag: String, kinds: Set<RecordChange.Kind>)] = [:]
    private var order: [RecordID] = []

    /// Whether this version of `record` was delivered already.
    func contains(_ record: Record) -> Bool {
        record.recordChangeTag != nil && versions[record.recordID]?.tag == record.recordChangeTag
    }

    /// Whether this change's version of its record was delivered already, for this kind of change.
    func contains(_ change: RecordChange) -> Bool {
        guard let record = change.record, contains(record) else { return false }
        return versions[record.recordID]?.kinds.contains(change.kind) == true
    }

    mutating func insert(_ change: RecordChange) {
        guard let record = change.record, let tag = record.recordChangeTag else { return }
        if let known = versions[record.recordID] {
            versions[record.recordID] = (tag, known.tag == tag ? known.kinds.union([change.kind]) : [change.kind])
            return
        }
        versions[record.recordID] = (tag, [change.kind])
        order.append(record.recordID)
        if order.count > Self.capacity {
            let forgotten = order.prefix(Self.capacity / 2)
            forgotten.forEach { versions[$0] = nil }
            order.removeFirst(forgotten.count)
        }
    }
}

/// When the fetch loop should look again soon, although nothing woke it.
///
/// A filesystem event may come from a commit still being written, which is not
/// visible yet; once it is, no further event follows (a WAL commit becomes visible
/// through the shared-memory index, which raises none). So after an event with no
/// visible change the loop looks again: every millisecond at first, then less
/// often, for about 2 s in all, rather than waiting for the next commit or the
/// poll timer (30 s with inotify). The first steps are short because the writer
/// is often only a moment behind, or was put off the CPU by the readers its first
/// write woke; the long tail is for a busy machine, where a writer can be off the
/// CPU for much longer, and costs a few looks of microseconds each.
struct Recheck {
    /// The waits, in seconds, after an event with nothing visible.
    static let schedule: [Double] = [0.001, 0.001, 0.001, 0.001, 0.001, 0.002, 0.002, 0.004, 0.008, 0.016,
                                     0.032, 0.064, 0.125, 0.25, 0.5, 1]

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
