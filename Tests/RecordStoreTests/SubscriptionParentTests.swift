import Foundation
import class GRDB.DatabaseQueue
import Testing
@testable import RecordStore

/// Subscriptions that belong to a record: they go when it goes, for every owner, and never fire for a record re-created under its name.
@Suite struct SubscriptionParentTests {
    let directory: TemporaryDirectory
    let alice: RecordDatabase
    let bob: RecordDatabase

    init() throws {
        directory = try TemporaryDirectory()
        alice = try directory.container(mode: .local).publicDatabase
        bob = Self.otherUser(of: alice)
    }

    /// The same public database as another account sees it.
    private static func otherUser(of database: RecordDatabase) -> RecordDatabase {
        RecordDatabase(scope: .public, storage: database.storage, assets: database.assets,
                       user: UserIdentity(uid: 4_000_001, userName: "fcsubbob", homeDirectory: "/nonexistent"), historyLimit: 1000)
    }

    private func channel(_ name: String, in database: RecordDatabase? = nil) throws -> Record {
        try (database ?? alice).save(Record(recordType: "Channel", recordID: RecordID(recordName: "channel.\(name)")))
    }

    private func message(in channel: Record, text: String) -> Record {
        var record = Record(recordType: "Message")
        record["channel"] = .reference(Reference(recordID: channel.recordID, action: .deleteSelf))
        record["text"] = .string(text)
        return record
    }

    /// What joining a channel saves: new messages in it, tied to it.
    private func subscription(to channel: Record, id: String? = nil, creationDate: Date? = nil) throws -> Subscription {
        Subscription(subscriptionID: id ?? "messages.\(channel.recordID.recordName)", recordType: "Message",
                     predicate: try QueryPredicate(format: "channel == %@", channel.recordID), options: [.firesOnRecordCreation],
                     parent: Subscription.Parent(recordID: channel.recordID, creationDate: creationDate ?? channel.creationDate))
    }

    private func ids(_ database: RecordDatabase) throws -> [String] {
        try database.allSubscriptions().map(\.subscriptionID)
    }

    @Test(arguments: [JournalMode.local, .network])
    func deletingTheParentDeletesEveryOwnersSubscriptionInTheSameOperation(mode: JournalMode) throws {
        let alice = try directory.container("in-\(mode.rawValue)", mode: mode).publicDatabase
        let bob = Self.otherUser(of: alice)
        let doomed = try channel("doomed", in: alice), kept = try channel("kept", in: alice)
        let posted = try alice.save(message(in: doomed, text: "before"))
        try alice.save(try subscription(to: doomed))
        try bob.save(try subscription(to: doomed))
        try bob.save(try subscription(to: kept))
        // Tied to a record that goes by cascade: the message, not the channel.
        try bob.save(Subscription(subscriptionID: "edits", recordType: "Message", options: [.firesOnRecordUpdate],
                                  parent: Subscription.Parent(recordID: posted.recordID)))
        #expect(try ids(bob) == ["edits", "messages.channel.doomed", "messages.channel.kept"])

        let result = try alice.modifyRecords(saving: [], deleting: [doomed.recordID])
        try result.check()
        #expect(result.cascadedDeletions == [posted.recordID])
        #expect(try ids(alice).isEmpty)
        #expect(try ids(bob) == ["messages.channel.kept"])
        #expect(try alice.orphanedSubscriptions().isEmpty)
    }

    @Test func aFailedAtomicDeleteKeepsTheSubscriptionsOfWhatItWouldHaveDeleted() throws {
        let db = try directory.container(mode: .local).privateDatabase
        let zone = ZoneID(zoneName: "work")
        try db.saveZone(zone)
        let parent = try db.save(Record(recordType: "Channel", recordID: RecordID(recordName: "channel.doomed", zoneID: zone)))
        try db.save(Subscription(subscriptionID: "watch", zone: zone, parent: Subscription.Parent(recordID: parent.recordID)))
        let missing = RecordID(recordName: "nowhere", zoneID: zone)

        // The parent goes first, then the missing record fails the batch.
        let failed = try db.modifyRecords(saving: [], deleting: [parent.recordID, missing])
        #expect(failed.deleteResults[missing]?.failure?.code == .unknownItem)
        #expect(failed.deleteResults[parent.recordID]?.failure?.code == .batchRequestFailed)
        #expect(try db.allSubscriptions().map(\.subscriptionID) == ["watch"], "rolled back with the delete")

        try db.modifyRecords(saving: [], deleting: [parent.recordID]).check()
        #expect(try db.allSubscriptions().isEmpty)
    }

    @Test func savingStampsTheParentAndRefusesAParentThatIsGoneOrNew() throws {
        let first = try channel("doomed")
        let stamped = try bob.save(try subscription(to: first).with(creationDate: nil))
        #expect(stamped.parent?.creationDate == first.creationDate)
        #expect(try bob.allSubscriptions().first?.parent == stamped.parent, "the stored body carries the stamp")

        try alice.deleteRecord(withID: first.recordID)
        let gone = #expect(throws: StoreError.self) { try bob.save(try subscription(to: first)) }
        #expect(gone?.code == .referenceViolation)

        let second = try channel("doomed")
        #expect(second.creationDate != first.creationDate)
        let stale = #expect(throws: StoreError.self) { try bob.save(try subscription(to: first)) }
        #expect(stale?.code == .referenceViolation)
        #expect(stale?.message.contains("created again") == true)
        #expect(try ids(bob).isEmpty)
        try bob.save(try subscription(to: second))
        #expect(try ids(bob) == ["messages.channel.doomed"])
    }

    @Test func evaluationDropsASubscriptionWhoseParentTheChangesShowGone() throws {
        let first = try channel("doomed")
        let stale = try subscription(to: first, id: "old")
        let token = try alice.currentChangeToken()
        try alice.deleteRecord(withID: first.recordID)
        let second = try channel("doomed")
        let posted = try alice.save(message(in: second, text: "secret plans in the new doomed"))
        let fresh = try subscription(to: second, id: "new")
        let changes = try alice.fetchChanges(since: token).changes

        let evaluation = Subscription.evaluate(changes, subscriptions: [stale, fresh])
        #expect(evaluation.notifications.map(\.subscriptionID) == ["new"])
        #expect(evaluation.notifications.first?.recordID == posted.recordID)
        #expect(evaluation.subscriptionsToDelete == ["old"])
        // The old channel's deletion, read now, shows the new channel: it does not end the new subscription.
        #expect(!Subscription.evaluate(Array(changes.prefix(1)), subscriptions: [fresh]).subscriptionsToDelete.contains("new"))
    }

    @Test func aParentCreatedAgainWithinAMillisecondIsAnotherRecord() throws {
        let current = try channel("quick")
        let created = try #require(current.creationDate)
        // The channel as read half a millisecond before it was deleted and created again: as quick as a
        // bot can be on a fast machine, and inside the millisecond that used to count as one instant.
        let stale = try subscription(to: current, creationDate: created.addingTimeInterval(-0.000_5))
        let parent = try #require(stale.parent)
        #expect(!parent.isSame(as: current))
        let readBack = try #require(try alice.record(for: current.recordID))
        #expect(Subscription.Parent(recordID: current.recordID, creationDate: created).isSame(as: readBack), "a date read back is the same instant")
        let refused = #expect(throws: StoreError.self) { try bob.save(stale) }
        #expect(refused?.code == .referenceViolation)

        // Written past the checks of `save`: an orphan, which its owner's next read drops.
        let body = String(decoding: try JSONEncoder().encode(stale), as: UTF8.self)
        try bob.storage.write { try $0.saveSubscription(id: stale.subscriptionID, owner: bob.user.recordID.recordName, body: body, parent: parent) }
        #expect(try alice.orphanedSubscriptions().map(\.subscriptionID) == [stale.subscriptionID])
        #expect(try bob.liveSubscriptions().isEmpty)
        // The same channel with the date as read is not an orphan.
        try bob.save(try subscription(to: current, id: "exact"))
        #expect(try ids(bob) == ["exact"])
        #expect(try alice.orphanedSubscriptions().isEmpty)
    }

    @Test func aRowThatSurvivedItsParentIsDroppedByItsOwnerAndReported() throws {
        let first = try channel("doomed")
        let survivor = try subscription(to: first)
        try alice.deleteRecord(withID: first.recordID)
        _ = try channel("doomed")
        // Written back as an old client would, past the checks of `save`.
        let body = String(decoding: try JSONEncoder().encode(survivor), as: UTF8.self)
        try bob.storage.write { try $0.saveSubscription(id: survivor.subscriptionID, owner: bob.user.recordID.recordName, body: body, parent: survivor.parent) }
        try bob.save(Subscription(subscriptionID: "plain", recordType: "Message", options: [.firesOnRecordCreation]))

        #expect(try alice.orphanedSubscriptions() == [OrphanedSubscription(owner: bob.user.recordID.recordName,
                                                                          subscriptionID: "messages.channel.doomed", parent: first.recordID)])
        #expect(try bob.liveSubscriptions().map(\.subscriptionID) == ["plain"])
        #expect(try ids(bob) == ["plain"], "the owner deleted it")
        #expect(try alice.orphanedSubscriptions().isEmpty)
    }

    @Test func droppingAnOrphanSparesTheSameIDSavedAgainForTheNewParent() throws {
        let first = try channel("doomed")
        let orphan = try bob.save(try subscription(to: first))
        try alice.deleteRecord(withID: first.recordID)
        let second = try channel("doomed")
        // Another terminal of bob's joins the new channel before this one drops its stale copy.
        let rejoined = try bob.save(try subscription(to: second))

        #expect(try bob.delete(orphan) == false)
        #expect(try bob.allSubscriptions() == [rejoined])
        #expect(try bob.delete(rejoined))
        #expect(try bob.allSubscriptions().isEmpty)
    }

    /// Rows are decoded once and kept by their exact text, since every engine reads them every few seconds; a row
    /// someone rewrote in the file is read as it is now, and one that no longer decodes is skipped.
    @Test func aSubscriptionRowRewrittenInTheFileIsReadAsItIsNow() throws {
        let kept = try channel("kept")
        let first = try subscription(to: kept)
        try bob.save(first)
        #expect(try bob.allSubscriptions() == [first])

        let rewritten = Subscription(subscriptionID: first.subscriptionID, recordType: "Note", options: [.firesOnRecordCreation])
        let queue = try DatabaseQueue(path: directory.path("container").appendingPathComponent("public.sqlite").path)
        func setBody(_ body: String) throws {
            try queue.write { try $0.execute(sql: "UPDATE subscription SET body = ? WHERE id = ?", arguments: [body, first.subscriptionID]) }
        }
        try setBody(String(decoding: try JSONEncoder().encode(rewritten), as: UTF8.self))
        #expect(try bob.allSubscriptions() == [rewritten])
        try setBody("garbage{{")
        #expect(try bob.allSubscriptions().isEmpty)
        try setBody(String(decoding: try JSONEncoder().encode(first), as: UTF8.self))
        #expect(try bob.allSubscriptions().map(\.subscriptionID) == [first.subscriptionID])
        try queue.close()
    }

    @Test func aParentThatDoesNotDecodeTakesNoSubscriptionWithIt() throws {
        let kept = try channel("kept")
        try bob.save(try subscription(to: kept))
        let queue = try DatabaseQueue(path: directory.path("container").appendingPathComponent("public.sqlite").path)
        try queue.write { try $0.execute(sql: "UPDATE record SET fields = 'garbage{{' WHERE name = 'channel.kept'") }
        try queue.close()
        #expect(throws: StoreError.self) { try alice.record(for: kept.recordID) }

        #expect(try bob.liveSubscriptions().map(\.subscriptionID) == ["messages.channel.kept"])
        #expect(try ids(bob) == ["messages.channel.kept"])
    }

    @Test func upgradingToV5DeletesOrphansAndTiesTheRestToTheRecordTheyName() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("container").appendingPathComponent("public.sqlite").path
        let alive: Record
        do {
            let db = try folder.container(mode: .local).publicDatabase
            alive = try db.save(Record(recordType: "Channel", recordID: RecordID(recordName: "channel.alive")))
        }
        // Back to the v4 format, with subscriptions as a v4 build saved them: no parent.
        let queue = try DatabaseQueue(path: path)
        let legacy: [(String, Subscription)] = [
            ("orphan", Subscription(subscriptionID: "messages.gone", recordType: "Message",
                                    predicate: try QueryPredicate(format: "channel == %@", RecordID(recordName: "channel.gone")),
                                    options: [.firesOnRecordCreation])),
            ("adopted", Subscription(subscriptionID: "messages.alive", recordType: "Message",
                                     predicate: try QueryPredicate(format: "channel == %@", alive.recordID), options: [.firesOnRecordCreation])),
            ("untouched", Subscription(subscriptionID: "everything", recordType: "Message", options: [.firesOnRecordCreation])),
        ]
        try queue.write { db in
            try db.execute(sql: """
                DROP INDEX subscription_by_parent;
                ALTER TABLE subscription DROP COLUMN parent_zone;
                ALTER TABLE subscription DROP COLUMN parent_name;
                ALTER TABLE subscription DROP COLUMN parent_created;
                DELETE FROM grdb_migrations WHERE identifier = 'v5-subscription-parents';
                """)
            for (_, subscription) in legacy {
                try db.execute(sql: "INSERT INTO subscription (owner, id, body) VALUES (?, ?, ?)", arguments: [
                    "_4000001_fcsubbob", subscription.subscriptionID, String(decoding: try JSONEncoder().encode(subscription), as: UTF8.self)])
            }
        }
        try queue.close()

        let reopened = Self.otherUser(of: try folder.container(mode: .local).publicDatabase)
        let after = try reopened.allSubscriptions()
        #expect(after.map(\.subscriptionID) == ["everything", "messages.alive"])
        #expect(after.first { $0.subscriptionID == "messages.alive" }?.parent == Subscription.Parent(recordID: alive.recordID, creationDate: alive.creationDate))
        #expect(after.first { $0.subscriptionID == "everything" }?.parent == nil)

        // Adopted for real: the parent's deletion now takes it along.
        let owner = try folder.container(mode: .local).publicDatabase
        try owner.deleteRecord(withID: alive.recordID)
        #expect(try reopened.allSubscriptions().map(\.subscriptionID) == ["everything"])
    }
}

private extension Subscription {
    func with(creationDate: Date?) -> Subscription {
        var copy = self
        copy.parent?.creationDate = creationDate
        return copy
    }
}
