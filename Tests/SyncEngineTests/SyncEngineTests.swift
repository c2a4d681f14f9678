import Foundation
import Testing
@testable import RecordStore
@testable import SyncEngine

@Suite struct SyncEngineTests {
    @Test func anotherContainersCommitArrivesAsAnEventOnTheDescriptor() throws {
        let dir = try TemporaryDirectory()
        let engine = try SyncEngine(container: try dir.container(user: "reader"), configuration: .testing())
        // The engine takes its starting position before anything is written; the loop goes on from there.
        try engine.fetchOnce()
        engine.start()
        defer { engine.stop() }
        var collector = EventCollector(engine: engine)

        let arrived = try saveAndDeleteArrive("hello", from: try dir.container(user: "writer"), at: &collector)
        #expect(arrived.saved)
        #expect(arrived.deleted)
    }

    /// A type passed over raises no event while other changes still come; taken back, its later changes come again.
    @Test func aTypePassedOverRaisesNoEventUntilItIsTakenBack() throws {
        let dir = try TemporaryDirectory()
        let engine = try SyncEngine(container: try dir.container(user: "reader"), configuration: .testing())
        try engine.fetchOnce()
        engine.passOver(recordTypes: ["Presence"])
        engine.start()
        defer { engine.stop() }
        var collector = EventCollector(engine: engine)
        let writer = try dir.container(user: "writer").publicDatabase
        try writer.save(Record(recordType: "Presence", recordID: RecordID(recordName: "presence.unseen")))
        try writer.save(Record(recordType: "Note", recordID: RecordID(recordName: "note.seen")))
        #expect(collector.collect(timeout: 10) { changedNames($0).contains("note.seen") })
        #expect(!changedNames(collector.received).contains("presence.unseen"))

        engine.passOver(recordTypes: [])
        try writer.save(Record(recordType: "Presence", recordID: RecordID(recordName: "presence.seen")))
        #expect(collector.collect(timeout: 10) { changedNames($0).contains("presence.seen") })
        #expect(!changedNames(collector.received).contains("presence.unseen"), "what was passed over stays passed over")
    }

    /// `start()` fixes where the feed is read from before it returns: a commit made at once after it is
    /// delivered, though the fetch thread may not have run yet. (Fixed by that thread's first pass, "now"
    /// could be later than the commit, which was then never delivered.)
    @Test func aCommitMadeAtOnceAfterStartIsDelivered() throws {
        let dir = try TemporaryDirectory()
        let reader = try dir.container(user: "reader")
        let writer = try dir.container(user: "writer").publicDatabase
        for round in 0..<8 {
            // A new client name each round: no saved position, so the engine starts from "now".
            let engine = try SyncEngine(container: reader, configuration: .testing(client: "prompt\(round)"))
            engine.start()
            defer { engine.stop() }
            let name = "right-after-start-\(round)"
            try writer.save(Record(recordType: "Note", recordID: RecordID(recordName: name)))
            var collector = EventCollector(engine: engine)
            #expect(collector.collect(timeout: 5) { changedNames($0).contains(name) }, "round \(round): the commit after start() arrived")
        }
    }

    /// A local file is looked at without a wake-up only every 30 s: inotify brings every commit made on this
    /// machine, so one arrives well before the timer could have brought it. Elsewhere the timer is the signal.
    @Test func aLocalFileWatchedByInotifyIsPolledRarelyAndACommitStillArrivesAtOnce() throws {
        let dir = try TemporaryDirectory()
        var configuration = SyncEngine.Configuration()
        configuration.clientName = "rare"
        let engine = try SyncEngine(container: try dir.container(user: "reader"), configuration: configuration)
        #expect(engine.pollInterval == 30)
        try engine.fetchOnce()
        engine.start()
        defer { engine.stop() }
        var collector = EventCollector(engine: engine)
        let writer = try dir.container(user: "writer")
        try writer.publicDatabase.save(Record(recordType: "Note", recordID: RecordID(recordName: "prompt")))
        #expect(collector.collect(timeout: 3) { changedNames($0).contains("prompt") }, "the commit came before the 30 s timer could bring it")

        var unwatched = configuration
        unwatched.useInotify = false
        #expect(try SyncEngine(container: try dir.container(user: "blind"), configuration: unwatched).pollInterval == 1)
        let shared = try TemporaryDirectory()
        #expect(try SyncEngine(container: try shared.container(user: "remote", mode: .network), configuration: configuration).pollInterval == 0.25)
    }

    /// The sender is woken by this process's own changes, and looks in the outbox on a timer only for what
    /// another process of the same user queued and left there; that still goes out, at the next look. After
    /// idling long enough for its private files to settle, the sender spares its looks (`SparedLooks`) until
    /// those files change, as the other process's commit changes them.
    @Test(arguments: [0.0, 1.5])
    func aChangeAnotherProcessOfTheUserLeftInTheOutboxGoesOutAtTheSendersNextLook(idleFirst: Double) throws {
        let dir = try TemporaryDirectory()
        var configuration = SyncEngine.Configuration.testing(client: "sender")
        configuration.outboxPollInterval = 0.5
        let sender = try SyncEngine(container: try dir.container(user: "me"), configuration: configuration)
        sender.start()
        defer { sender.stop() }
        #expect(SyncEngine.Configuration().outboxPollInterval == 30)
        Thread.sleep(forTimeInterval: idleFirst)

        // A second engine of the same user only queues, as a process that exits before it sends would.
        let leaver = try SyncEngine(container: try dir.container(user: "me"), configuration: .stepped(client: "leaver"))
        try leaver.send(saving: [Record(recordType: "Note", recordID: RecordID(recordName: "left"))])
        let reader = try dir.container(user: "reader").publicDatabase
        let id = RecordID(recordName: "left")
        let sent = { (try? reader.record(for: id)) != nil }
        // The outbox is cleared in a commit of its own after the save, so wait for both.
        let settled = { sent() && (try? leaver.state(of: id)) == .sent }
        let deadline = Date().addingTimeInterval(30)
        while !settled(), Date() < deadline { usleep(20_000) }
        #expect(sent(), "the running sender sent what the other process queued")
        #expect(try leaver.state(of: id) == .sent, "and cleared it from the outbox")
    }

    @Test func aSteppedEngineHasEmittedWhatItsPassFetchedWhenTheCallReturns() throws {
        let dir = try TemporaryDirectory()
        let engine = try SyncEngine(container: try dir.container(user: "reader"), configuration: .stepped())
        engine.start()
        defer { engine.stop() }
        try engine.fetchOnce()
        let writer = try dir.container(user: "writer")
        try writer.publicDatabase.save(Record(recordType: "Note", recordID: RecordID(recordName: "stepped")))
        var collector = EventCollector(engine: engine)
        collector.drain()
        #expect(changedNames(collector.received).isEmpty, "nothing fetches until the test steps the engine")

        try engine.fetchOnce()
        var descriptor = [pollfd(fd: engine.eventDescriptor, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&descriptor, 1, 0) == 1, "the descriptor is readable at once")
        collector.drain()
        #expect(changedNames(collector.received) == ["stepped"])
    }

    @Test func aSteppedEngineSendsOnlyWhenToldAndReportsItBeforeReturning() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let engine = try SyncEngine(container: container, configuration: .stepped())
        engine.start()
        defer { engine.stop() }
        let message = Record(recordType: "Message", recordID: RecordID(recordName: "stepped-send"))
        try engine.send(saving: [message])
        #expect(try engine.state(of: message.recordID) == .pending)

        try engine.sendOnce()
        #expect(try engine.state(of: message.recordID) == .sent)
        #expect((try? container.publicDatabase.record(for: message.recordID)) != nil)
        var collector = EventCollector(engine: engine)
        collector.drain()
        #expect(collector.received.contains { if case .sent(let saved, _) = $0 { saved.map(\.recordID) == [message.recordID] } else { false } })
    }

    @Test func sendingGoesThroughTheOutboxAndArrives() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let engine = try SyncEngine(container: container, configuration: .testing())
        var message = Record(recordType: "Message", recordID: RecordID(recordName: "m1"))
        message["text"] = "queued before start"
        try engine.send(saving: [message])
        #expect(try engine.state(of: message.recordID) == .pending)
        #expect(try engine.outboxEntries().map(\.recordID) == [message.recordID])
        #expect((try? container.publicDatabase.record(for: message.recordID)) == nil)

        engine.start()
        defer { engine.stop() }
        #expect(engine.waitUntilSent(timeout: 10))
        #expect(try engine.state(of: message.recordID) == .sent)
        #expect(try container.publicDatabase.record(for: message.recordID)["text"] == "queued before start")
        var collector = EventCollector(engine: engine)
        #expect(collector.collect(timeout: 5) { events in
            events.contains { if case .sent(let saved, _) = $0 { saved.map(\.recordID) == [message.recordID] } else { false } }
        })
    }

    @Test func aSentEventComesOnlyOnceItsEntriesAreGoneFromTheOutbox() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let engine = try SyncEngine(container: container, configuration: .testing())
        engine.start()
        defer { engine.stop() }
        // A burst while the sender runs, so that it sends several batches and settles them together.
        let ids = (0..<300).map { RecordID(recordName: "burst-\($0)") }
        for id in ids { try engine.send(saving: [Record(recordType: "Message", recordID: id)]) }

        var collector = EventCollector(engine: engine)
        var reported: Set<RecordID> = []
        var stillQueued: [RecordID] = []
        var seen = 0
        #expect(collector.collect(timeout: 30) { events in
            for case .sent(let saved, _) in events.dropFirst(seen) {
                for record in saved {
                    reported.insert(record.recordID)
                    if (try? engine.state(of: record.recordID)) != .sent { stillQueued.append(record.recordID) }
                }
            }
            seen = events.count
            return reported.count == ids.count
        }, "reported \(reported.count) of \(ids.count)")
        #expect(stillQueued.isEmpty, "reported sent while still in the outbox: \(stillQueued.prefix(5))")
        #expect(try engine.outboxEntries().isEmpty)
        #expect(try container.publicDatabase.fetchChanges(since: nil).changes.count == ids.count)
    }

    @Test func theOutboxSurvivesARestartAndIsSentThen() throws {
        let dir = try TemporaryDirectory()
        do {
            let engine = try SyncEngine(container: try dir.container(), configuration: .testing())
            try engine.send(saving: (0..<5).map { Record(recordType: "Message", recordID: RecordID(recordName: "late-\($0)")) })
        }
        let container = try dir.container()
        let engine = try SyncEngine(container: container, configuration: .testing())
        #expect(try engine.outboxEntries().count == 5)
        engine.start()
        defer { engine.stop() }
        #expect(engine.waitUntilSent(timeout: 10))
        for i in 0..<5 {
            #expect((try? container.publicDatabase.record(for: RecordID(recordName: "late-\(i)"))) != nil)
        }
    }

    @Test func aPermanentFailureIsReportedAndKeptUntilDiscardedOrRetried() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let channel = try container.publicDatabase.save(Record(recordType: "Channel", recordID: RecordID(recordName: "gone")))
        try container.publicDatabase.deleteRecord(withID: channel.recordID)
        let engine = try SyncEngine(container: container, configuration: .testing())
        var message = Record(recordType: "Message", recordID: RecordID(recordName: "orphan"))
        message["channel"] = .reference(Reference(recordID: channel.recordID, action: .deleteSelf))
        message["text"] = "to a deleted channel"
        try engine.send(saving: [message])
        engine.start()
        defer { engine.stop() }

        var collector = EventCollector(engine: engine)
        #expect(collector.collect(timeout: 10) { events in
            events.contains { if case .sendFailed(let id, let error) = $0 { id == message.recordID && error.code == .referenceViolation } else { false } }
        })
        #expect(try engine.state(of: message.recordID) == .failed(code: .referenceViolation, message: "orphan refers to gone, which does not exist."))
        let kept = try #require(try engine.outboxEntries().first?.record)
        #expect(kept["text"] == "to a deleted channel")
        #expect(engine.waitUntilSent(timeout: 1), "failed entries are not pending")

        // Once the channel exists again, a retry goes through.
        try container.publicDatabase.save(Record(recordType: "Channel", recordID: RecordID(recordName: "gone")))
        try engine.retry(message.recordID)
        #expect(engine.waitUntilSent(timeout: 10))
        #expect(try engine.state(of: message.recordID) == .sent)

        var doomed = Record(recordType: "Message", recordID: RecordID(recordName: "doomed"))
        doomed["channel"] = .reference(Reference(recordID: RecordID(recordName: "never-there"), action: .deleteSelf))
        try engine.send(saving: [doomed])
        #expect(collector.collect(timeout: 10) { events in
            events.contains { if case .sendFailed(let id, _) = $0 { id == doomed.recordID } else { false } }
        })
        try engine.discard(doomed.recordID)
        #expect(try engine.outboxEntries().isEmpty)
        #expect((try? container.publicDatabase.record(for: doomed.recordID)) == nil)
    }

    @Test func aResendOfSomethingAlreadyCommittedCountsAsSentOnce() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        var message = Record(recordType: "Message", recordID: RecordID(recordName: "once"))
        message["text"] = "hello"
        // As if the process died after the public commit but before clearing its outbox.
        try container.publicDatabase.save(message)
        let engine = try SyncEngine(container: container, configuration: .testing())
        try engine.send(saving: [message])
        engine.start()
        defer { engine.stop() }
        #expect(engine.waitUntilSent(timeout: 10))
        #expect(try engine.state(of: message.recordID) == .sent)
        #expect(try container.publicDatabase.fetchChanges(since: nil).changes.count == 1)
    }

    @Test func afterARestartItReportsWhatArrivedWhileAway() throws {
        let dir = try TemporaryDirectory()
        do {
            let engine = try SyncEngine(container: try dir.container(user: "reader"), configuration: .stepped())
            try engine.fetchOnce()
        }
        let writer = try dir.container(user: "writer")
        try writer.publicDatabase.save(Record(recordType: "Note", recordID: RecordID(recordName: "while-away")))

        let engine = try SyncEngine(container: try dir.container(user: "reader"), configuration: .testing())
        engine.start()
        defer { engine.stop() }
        var collector = EventCollector(engine: engine)
        #expect(collector.collect(timeout: 10) { changedNames($0).contains("while-away") })
    }

    @Test func aDeliveredPositionIsSavedOnceItIsDueNotPerMessageAndAtOnceOnStop() throws {
        let dir = try TemporaryDirectory()
        var configuration = SyncEngine.Configuration.testing()
        configuration.tokenSaveDelay = 3
        let engine = try SyncEngine(container: try dir.container(user: "reader"), configuration: configuration)
        try engine.fetchOnce()  // takes and saves the position "now"
        let start = engine.savedToken()
        #expect(start != nil)
        engine.start()
        let writer = try dir.container(user: "writer")
        var collector = EventCollector(engine: engine)

        try writer.publicDatabase.save(Record(recordType: "Note", recordID: RecordID(recordName: "first")))
        #expect(collector.collect(timeout: 10) { changedNames($0).contains("first") })
        let afterFirst = try writer.publicDatabase.currentChangeToken()
        #expect(engine.savedToken() == start, "a delivery does not save its position at once")
        let saved = Date()
        while engine.savedToken() != afterFirst, Date().timeIntervalSince(saved) < 15 { usleep(50_000) }
        #expect(engine.savedToken() == afterFirst, "the position is saved once it is due, with no stop and no further delivery")

        try writer.publicDatabase.save(Record(recordType: "Note", recordID: RecordID(recordName: "second")))
        #expect(collector.collect(timeout: 10) { changedNames($0).contains("second") })
        engine.stop()
        #expect(engine.savedToken() == (try writer.publicDatabase.currentChangeToken()), "a stop saves the position at once")
    }

    /// A started engine for "reader" in `dir` that has taken and saved its starting position, and reads
    /// its subscriptions again after 0.3 s.
    private func startedReader(in dir: TemporaryDirectory, _ configure: (inout SyncEngine.Configuration) -> Void = { _ in }) throws -> SyncEngine {
        var configuration = SyncEngine.Configuration.testing()
        configuration.subscriptionRefresh = 0.3
        configure(&configuration)
        let engine = try SyncEngine(container: try dir.container(user: "reader"), configuration: configuration)
        try engine.fetchOnce()
        engine.start()
        return engine
    }

    /// Saves a record of `type` named `name` through `writer` and waits until the engine delivers it.
    private func saveAndAwait(_ type: String, _ name: String, by writer: Container, seenBy collector: inout EventCollector) throws {
        try writer.publicDatabase.save(Record(recordType: type, recordID: RecordID(recordName: name)))
        #expect(collector.collect(timeout: 10) { changedNames($0).contains(name) })
    }

    @Test func aBatchOfEphemeralChangesAloneWaitsLongerToBeSavedAndAnythingElseSavesItOnTime() throws {
        let dir = try TemporaryDirectory()
        let engine = try startedReader(in: dir) { configuration in
            configuration.tokenSaveDelay = 0.3
            configuration.ephemeralTokenSaveDelay = 60
            configuration.ephemeralRecordTypes = ["Heartbeat"]
        }
        let start = engine.savedToken()
        let writer = try dir.container(user: "writer")
        var collector = EventCollector(engine: engine)
        func save(_ type: String, _ name: String) throws { try saveAndAwait(type, name, by: writer, seenBy: &collector) }

        try save("Heartbeat", "beat-1")
        usleep(1_500_000)
        #expect(engine.savedToken() == start, "a batch of heartbeats alone does not save its position within tokenSaveDelay")

        try save("Note", "note")
        let afterNote = try writer.publicDatabase.currentChangeToken()
        let saved = Date()
        while engine.savedToken() != afterNote, Date().timeIntervalSince(saved) < 15 { usleep(50_000) }
        #expect(engine.savedToken() == afterNote, "a batch with anything else saves the position, heartbeats' included, on time")

        try save("Heartbeat", "beat-2")
        engine.stop()
        #expect(engine.savedToken() == (try writer.publicDatabase.currentChangeToken()), "a stop saves a heartbeat's position too")
    }

    @Test func anEphemeralChangeMeetsTheSubscriptionsAsLastReadAndTheNextOtherChangeReadsThemAgain() throws {
        let dir = try TemporaryDirectory()
        let engine = try startedReader(in: dir) { $0.ephemeralRecordTypes = ["Heartbeat"] }
        defer { engine.stop() }
        let writer = try dir.container(user: "writer")
        var collector = EventCollector(engine: engine)
        func save(_ type: String, _ name: String) throws { try saveAndAwait(type, name, by: writer, seenBy: &collector) }
        func notified(_ events: [SyncEvent]) -> [String] {
            events.compactMap { event -> String? in
                if case .notification(let n) = event { return n.recordID.recordName }
                return nil
            }
        }
        try save("Heartbeat", "beat-before")  // reads the (empty) subscriptions once and keeps them

        let otherTerminal = try dir.container(user: "reader")
        for type in ["Heartbeat", "Note"] {
            try otherTerminal.publicDatabase.save(Subscription(
                subscriptionID: "any-\(type)", recordType: type, predicate: .all, options: [.firesOnRecordCreation]))
        }
        usleep(600_000)
        try save("Heartbeat", "beat-after")
        try save("Note", "note-after")
        _ = collector.collect(timeout: 5) { notified($0).contains("note-after") }
        #expect(notified(collector.received) == ["note-after"],
                "a heartbeat alone does not read the subscriptions again; the next note does")
    }

    @Test func aSubscriptionAnotherTerminalOfTheUserSavedIsUsedOnceTheCacheIsRefreshed() throws {
        let dir = try TemporaryDirectory()
        let engine = try startedReader(in: dir)
        defer { engine.stop() }
        let writer = try dir.container(user: "writer")
        var collector = EventCollector(engine: engine)
        func post(_ name: String) throws {
            var message = Record(recordType: "Message", recordID: RecordID(recordName: name))
            message["text"] = "ping"
            try writer.publicDatabase.save(message)
            #expect(collector.collect(timeout: 10) { changedNames($0).contains(name) })
        }
        try post("before")  // the engine reads the (empty) subscriptions for this batch and keeps them

        let otherTerminal = try dir.container(user: "reader")
        try otherTerminal.publicDatabase.save(Subscription(
            subscriptionID: "pings", recordType: "Message", predicate: try QueryPredicate(format: "text == %@", "ping"),
            options: [.firesOnRecordCreation]))
        usleep(600_000)
        try post("after")
        func notified(_ events: [SyncEvent]) -> [String] {
            events.compactMap { event -> String? in
                if case .notification(let n) = event { return n.recordID.recordName }
                return nil
            }
        }
        // The notification is emitted just after the batch's records: wait for it, not only for them.
        _ = collector.collect(timeout: 5) { notified($0).contains("after") }
        #expect(notified(collector.received) == ["after"])
    }

    @Test func anExpiredTokenStartsOverAndSaysSo() throws {
        let dir = try TemporaryDirectory()
        var options = Container.Options(privateDataDirectory: dir.path("private-reader"))
        options.changeHistoryLimit = 5
        do {
            let engine = try SyncEngine(container: try Container(url: dir.path("container"), options: options), configuration: .stepped())
            try engine.fetchOnce()
        }
        var writerOptions = options
        writerOptions.privateDataDirectory = dir.path("private-writer")
        let writer = try Container(url: dir.path("container"), options: writerOptions)
        for i in 0..<20 { try writer.publicDatabase.save(Record(recordType: "Note", recordID: RecordID(recordName: "n\(i)"))) }

        var configuration = SyncEngine.Configuration.testing()
        configuration.refetch = { database in [try database.record(for: RecordID(recordName: "n19"))] }
        let engine = try SyncEngine(container: try Container(url: dir.path("container"), options: options), configuration: configuration)
        engine.start()
        defer { engine.stop() }
        var collector = EventCollector(engine: engine)
        #expect(collector.collect(timeout: 10) { events in
            events.contains { if case .changeTokenExpired(let records) = $0 { records.map(\.recordID.recordName) == ["n19"] } else { false } }
        })
    }
}

@Suite struct SyncNotificationTests {
    @Test func subscriptionsOfTheOwnerBecomeNotificationsWithRenderedAlerts() throws {
        let dir = try TemporaryDirectory()
        let reader = try dir.container(user: "reader")
        try reader.publicDatabase.save(Subscription(
            subscriptionID: "greetings", recordType: "Message", predicate: try QueryPredicate(format: "text BEGINSWITH %@", "hi"),
            options: [.firesOnRecordCreation, .firesOnce],
            notificationInfo: NotificationInfo(alertLocalizationKey: "greet", alertLocalizationArgs: ["from", "text"], shouldBadge: true)))
        var configuration = SyncEngine.Configuration.stepped()
        configuration.alertStrings = AlertStrings(["greet": "%@ says %@"])
        let engine = try SyncEngine(container: reader, configuration: configuration)
        try engine.fetchOnce()
        var collector = EventCollector(engine: engine)

        let writer = try dir.container(user: "writer")
        for (name, text) in [("m1", "hello"), ("m2", "hi there"), ("m3", "hi again")] {
            var message = Record(recordType: "Message", recordID: RecordID(recordName: name))
            message["from"] = "ada"
            message["text"] = .string(text)
            try writer.publicDatabase.save(message)
        }
        try engine.fetchOnce()
        #expect(collector.collect(timeout: 10) { events in
            changedNames(events).contains("m3") && events.contains { if case .notification = $0 { true } else { false } }
        })
        try engine.fetchOnce()
        collector.drain()  // anything a second pass would add
        let notifications = collector.received.compactMap { event -> SubscriptionNotification? in
            if case .notification(let n) = event { return n }
            return nil
        }
        #expect(notifications.map(\.recordID.recordName) == ["m2"], "firesOnce: only the first match")
        #expect(notifications.first?.alertText == "ada says hi there")
        #expect(notifications.first?.reason == .created)
        #expect(try reader.publicDatabase.allSubscriptions().isEmpty, "a spent firesOnce subscription is deleted")
    }
}

extension SyncNotificationTests {
    /// An update that makes a record stop matching a query subscription is told by comparing it with its
    /// previous fields, which the engine reads for the types its owner's query subscriptions look at (and
    /// only for them: another type's update comes without them).
    @Test func anUpdateThatStopsMatchingIsNotifiedWithStoppedMatching() throws {
        let dir = try TemporaryDirectory()
        let reader = try dir.container(user: "reader")
        try reader.publicDatabase.save(Subscription(
            subscriptionID: "urgent", recordType: "Task", predicate: try QueryPredicate(format: "state == %@", "urgent"),
            options: [.firesOnRecordUpdate]))
        let engine = try SyncEngine(container: reader, configuration: .stepped())
        try engine.fetchOnce()
        var collector = EventCollector(engine: engine)
        // Delivered first, so that the engine has read its owner's subscriptions when the update comes.
        let writer = try dir.container(user: "writer")
        var task = Record(recordType: "Task", recordID: RecordID(recordName: "t1"))
        task["state"] = "urgent"
        task = try writer.publicDatabase.save(task)
        try engine.fetchOnce()
        #expect(collector.collect(timeout: 10) { changedNames($0).contains("t1") })

        task["state"] = "done"
        try writer.publicDatabase.save(task)
        try engine.fetchOnce()
        #expect(collector.collect(timeout: 10) { events in events.contains { if case .notification = $0 { true } else { false } } })
        let notifications = collector.received.compactMap { event -> SubscriptionNotification? in
            if case .notification(let n) = event { return n }
            return nil
        }
        #expect(notifications.map(\.recordID.recordName) == ["t1"])
        #expect(notifications.first?.reason == .updated && notifications.first?.stoppedMatching == true)
    }
}

@Suite struct RecheckTests {
    @Test func aFilesystemEventWithNothingVisibleIsLookedAtAgainSoonThenLeft() {
        var recheck = Recheck()
        recheck.note(.timeout, changed: false)
        #expect(recheck.delay == nil, "a quiet timer tick schedules nothing")
        recheck.note(.filesystem, changed: false)
        var delays: [Double] = []
        while let delay = recheck.delay {
            delays.append(delay)
            recheck.note(.timeout, changed: false)
        }
        #expect(delays == Recheck.schedule)
        #expect(delays.reduce(0, +) > 1.5, "rechecks go on long enough for a writer put off the CPU of a busy machine")
        #expect(delays.prefix(10).reduce(0, +) < 0.05, "most commits are seen within milliseconds")
        #expect(delays.prefix(5).allSatisfy { $0 <= 0.001 }, "the first looks come quickly")

        recheck.note(.filesystem, changed: false)
        recheck.note(.timeout, changed: false)
        #expect(recheck.delay == Recheck.schedule[1])
        recheck.note(.timeout, changed: true)
        #expect(recheck.delay == nil, "a change seen ends the rechecks")
        recheck.note(.filesystem, changed: true)
        #expect(recheck.delay == nil, "an event whose change is visible needs no second look")
        recheck.note(.filesystem, changed: false)
        recheck.note(.woken, changed: false)
        #expect(recheck.delay == nil)
    }
}
