import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore
@testable import SyncEngine

/// The outbox's create-only saves and subscription changes, and a write that another process's lock holds up.
@Suite struct HeldUpWriteTests {
    @Test func aCreateThatFindsTheRecordMadeMeanwhileCountsAsSentAndChangesNothing() throws {
        let dir = try TemporaryDirectory()
        let other = try dir.container(user: "other")
        var first = Record(recordType: "Room", recordID: RecordID(recordName: "room.one"))
        first["topic"] = "theirs"
        try other.publicDatabase.save(first)

        let engine = try SyncEngine(container: try dir.container(user: "me"), configuration: .testing())
        engine.start()
        defer { engine.stop() }
        var mine = Record(recordType: "Room", recordID: first.recordID)
        mine["topic"] = "mine"
        var plain = Record(recordType: "Room", recordID: RecordID(recordName: "room.two"))
        plain["topic"] = "new"
        try engine.send([.create(mine), .create(plain)])
        #expect(engine.waitUntilSent(timeout: 10))
        #expect(try engine.state(of: mine.recordID) == .sent)
        #expect(try other.publicDatabase.record(for: first.recordID)["topic"] == "theirs")
        #expect(try other.publicDatabase.record(for: plain.recordID)["topic"] == "new")
    }

    @Test func subscriptionsAreSavedAndDeletedThroughTheOutbox() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let engine = try SyncEngine(container: container, configuration: .testing())
        let subscription = Subscription(subscriptionID: "notes", recordType: "Note", options: [.firesOnRecordCreation])
        try engine.send([.saveSubscription(subscription), .deleteSubscription("never-saved")])
        #expect(try engine.outboxEntries().map(\.operation) == [.subscribe, .unsubscribe])
        #expect(try container.publicDatabase.allSubscriptions().isEmpty, "nothing reaches the shared file before the engine runs")

        engine.start()
        defer { engine.stop() }
        #expect(engine.waitUntilSent(timeout: 10))
        #expect(try container.publicDatabase.allSubscriptions().map(\.subscriptionID) == ["notes"])
        #expect(try engine.outboxEntries().isEmpty, "deleting one that is not there is done, not failed")

        try engine.send([.deleteSubscription("notes")])
        #expect(engine.waitUntilSent(timeout: 10))
        #expect(try container.publicDatabase.allSubscriptions().isEmpty)
    }

    @Test(.enabled(if: HeldLock.available, "needs the sqlite3 command"))
    func aWriteHeldUpByAnotherProcesssLockIsReportedUntilItGoesThrough() async throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let engine = try SyncEngine(container: container, configuration: .testing())
        engine.start()
        defer { engine.stop() }
        var collector = EventCollector(engine: engine)

        let lock = try await HeldLock(path: dir.path("container").appendingPathComponent("public.sqlite").path)
        try engine.send(saving: [Record(recordType: "Note", recordID: RecordID(recordName: "held"))])
        let held = collector.collect(timeout: 60) { events in
            events.contains { if case .status(let status) = $0 { status.waitingSince != nil && status.pending == 1 } else { false } }
        }
        #expect(held, "a status says since when the write waits")
        #expect(engine.waitingSince != nil)

        lock.release()
        let through = collector.collect(timeout: 60) { events in
            guard case .status(let status)? = events.last(where: { if case .status = $0 { true } else { false } }) else { return false }
            return status.waitingSince == nil && status.pending == 0
        }
        #expect(through, "once the lock is gone the status says so: \(collector.received)")
        #expect(try container.publicDatabase.record(for: RecordID(recordName: "held")).recordType == "Note")
    }
}
