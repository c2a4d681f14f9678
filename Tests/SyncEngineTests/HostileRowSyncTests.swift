import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore
@testable import SyncEngine

/// A running engine meets rows that someone wrote into the shared file by hand.
@Suite struct HostileRowSyncTests {
    private func plant(_ dir: TemporaryDirectory, _ sql: String) throws {
        try SQLiteCLI.run(dir.path("container").appendingPathComponent("public.sqlite").path, sql)
    }

    private func note(_ name: String) -> Record {
        var record = Record(recordType: "Note", recordID: RecordID(recordName: name))
        record["text"] = .string(name)
        return record
    }

    /// Starts an engine on `container`, and lets it take its starting token before anything is written.
    private func started(_ container: Container, configuration: SyncEngine.Configuration = .testing()) throws -> (SyncEngine, EventCollector) {
        let engine = try SyncEngine(container: container, configuration: configuration)
        try engine.fetchOnce()
        engine.start()
        return (engine, EventCollector(engine: engine))
    }

    /// The notifications among `events`, by record name.
    private func notified(_ events: [SyncEvent]) -> [String] {
        events.compactMap { event in
            if case .notification(let notification) = event { return notification.recordID.recordName }
            return nil
        }
    }

    @Test("A garbage change row and a message whose fields are [] do not stop delivery of what comes before and after")
    func deliveryGoesOnPastGarbage() throws {
        let dir = try TemporaryDirectory()
        var (engine, collector) = try started(try dir.container(user: "reader"))
        defer { engine.stop() }

        let writer = try dir.container(user: "writer").publicDatabase
        try writer.save(note("before"))
        #expect(collector.collect(timeout: 10) { changedNames($0).contains("before") })
        // One transaction, so the engine never sees "emptied" whole.
        try plant(dir, """
            BEGIN;
            INSERT INTO change (zone, name, type, kind, previous, at) VALUES ('_defaultZone', 'ghost', 'Note', 1, 'garbage{{', 0);
            INSERT INTO record (zone, name, type, fields, created, modified, creator, modifier, tag)
                VALUES ('_defaultZone', 'emptied', 'Note', '[]', 0, 0, 'mallory', 'mallory', 't');
            INSERT INTO change (zone, name, type, kind, previous, at) VALUES ('_defaultZone', 'emptied', 'Note', 0, NULL, 0);
            COMMIT;
            """)
        try writer.save(note("after"))
        #expect(collector.collect(timeout: 10) { changedNames($0).contains("after") }, "delivery stalled: \(collector.received)")
        let names = changedNames(collector.received)
        #expect(names.filter { $0 == "before" }.count == 1 && names.filter { $0 == "after" }.count == 1)
        #expect(!names.contains("emptied") && !names.contains("ghost"))
    }

    @Test("A record another program writes into the file, ringing no bell, arrives while others' commits ring")
    func aCommitThatRingsNoBellArrivesWhenTheTrustInBellsLapses() throws {
        let dir = try TemporaryDirectory()
        var configuration = SyncEngine.Configuration.testing()
        // Only the watcher wakes this engine: its timer would look long after the trust lapsed.
        configuration.pollInterval = 30
        var (engine, collector) = try started(try dir.container(user: "reader"), configuration: configuration)
        defer { engine.stop() }

        let writer = try dir.container(user: "writer").publicDatabase
        try writer.save(note("rings"))
        #expect(collector.collect(timeout: 10) { changedNames($0).contains("rings") })
        // The engine listens for bells alone now; sqlite3 rings none.
        let planted = Date()
        try plant(dir, """
            BEGIN;
            INSERT INTO record (zone, name, type, fields, created, modified, creator, modifier, tag)
                SELECT zone, 'silent', type, fields, created, modified, creator, modifier, 'silent-tag' FROM record WHERE name = 'rings';
            INSERT INTO change (zone, name, type, kind, previous, at) VALUES ('_defaultZone', 'silent', 'Note', 0, NULL, 0);
            COMMIT;
            """)
        let arrived = collector.collect(timeout: ChangeWatcher.trustInBells + 3) { changedNames($0).contains("silent") }
        #expect(arrived, "a commit that rang no bell was not delivered within \(Date().timeIntervalSince(planted)) s")
    }

    @Test("Garbage and duplicated subscription rows, and forged change rows: one post gives one change event and one notification")
    func oneEventPerChangeWhateverTheSubscriptionRowsSay() throws {
        let dir = try TemporaryDirectory()
        let reader = try dir.container(user: "reader")
        try reader.publicDatabase.save(Subscription(subscriptionID: "notes", recordType: "Note", options: .firesOnRecordCreation))
        let owner = reader.currentUserRecordID.recordName
        try plant(dir, """
            INSERT INTO subscription (owner, id, body) VALUES ('\(owner)', 'garbage', 'garbage{{');
            INSERT INTO subscription (owner, id, body) VALUES ('\(owner)', 'blob', x'00ff');
            INSERT INTO subscription (owner, id, body) SELECT owner, 'copy', body FROM subscription WHERE id = 'notes';
            INSERT INTO subscription (owner, id, body) SELECT owner, 'twin', json_set(body, '$.id', 'twin') FROM subscription WHERE id = 'notes';
            """)
        var (engine, collector) = try started(reader)
        defer { engine.stop() }

        let writer = try dir.container(user: "writer").publicDatabase
        try writer.save(note("first"))
        #expect(collector.collect(timeout: 10) { notified($0).contains("first") }, "\(collector.received)")
        // Change rows written by hand for "first", which nobody changed, deliver nothing again.
        try plant(dir, """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
            INSERT INTO change (zone, name, type, kind, previous, at) SELECT '_defaultZone', 'first', 'Note', i % 2, NULL, 0 FROM n;
            """)
        // A later post, once delivered, shows that the engine went on rather than retrying the first batch.
        try writer.save(note("second"))
        #expect(collector.collect(timeout: 10) { notified($0).contains("second") }, "\(collector.received)")
        for name in ["first", "second"] {
            #expect(changedNames(collector.received).filter { $0 == name }.count == 1, "\(name): \(changedNames(collector.received))")
            #expect(notified(collector.received).filter { $0 == name }.count == 1, "\(name): \(notified(collector.received))")
        }
    }
}
