import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore

/// Garbage that another member of a shared container writes straight into `public.sqlite` with the `sqlite3` CLI.
///
/// Each test plants what a hostile member planted in the audit of issue 11
/// and checks the outcome: the good rows still read, the feed moves on, the
/// bad row is listed, and nothing traps.
@Suite struct HostileRowTests {
    /// Runs SQL on the container's public database with the real `sqlite3` tool, as someone in the group would.
    static func plant(_ container: URL, _ sql: String) throws {
        try SQLiteCLI.run(container.appendingPathComponent("public.sqlite").path, sql)
    }

    private func note(_ name: String, _ text: String = "hi") -> Record {
        var record = Record(recordType: "Note", recordID: RecordID(recordName: name))
        record["text"] = .string(text)
        return record
    }

    private func allNotes(_ db: RecordDatabase) throws -> [String] {
        let query = Query(recordType: "Note", predicate: .all, sortDescriptors: [try QuerySortDescriptor(key: "text")])
        return try db.records(matching: query).records.map(\.recordID.recordName)
    }

    /// Every change after `token` (the beginning when nil), page by page: the names changed, and the token reached.
    private func fetchAll(_ db: RecordDatabase, since token: ChangeToken?, limit: Int = 400) throws -> (names: [String], token: ChangeToken) {
        var token = token
        var names: [String] = []
        var pages = 0
        while true {
            let batch = try db.fetchChanges(since: token, limit: limit)
            names += batch.changedRecords.map(\.recordID.recordName)
            token = batch.token
            pages += 1
            if !batch.moreComing || pages > 100 { return (names, batch.token) }
        }
    }

    @Test("Typed garbage in any record column is skipped, listed by the check, and never traps")
    func typedGarbageInRecordsIsSkipped() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let db = container.publicDatabase
        let garbage: [(name: String, sql: String)] = [
            ("created-text", "created = 'yesterday'"),
            ("creator-blob", "creator = x'00ff'"),
            ("tag-blob", "tag = x'01'"),
            ("modified-infinite", "modified = 9e999"),
            ("fields-array", "fields = '[]'"),
            ("fields-nonsense", "fields = 'nonsense'"),
            ("field-infinite-date", "fields = '{\"text\":{\"t\":\"t\",\"v\":1e999}}'"),
            ("type-blob", "type = x'4e6f7465'"),
        ]
        try db.save(note("good-1", "a"))
        for (index, bad) in garbage.enumerated() { try db.save(note(bad.name, "b\(index)")) }
        try db.save(note("good-2", "c"))
        let start = try db.currentChangeToken()
        for bad in garbage {
            try Self.plant(container.url, "UPDATE record SET \(bad.sql) WHERE name = '\(bad.name)'")
        }
        try db.save(note("good-3", "d"))

        // Queries, twice: the good rows only.
        #expect(try allNotes(db) == ["good-1", "good-2", "good-3"])
        #expect(try allNotes(db) == ["good-1", "good-2", "good-3"])
        // Asked for by name, a damaged record is an error for that item only.
        #expect(throws: StoreError.self) { try db.record(for: RecordID(recordName: "created-text")) }
        let both = try db.records(for: [RecordID(recordName: "good-1"), RecordID(recordName: "tag-blob")])
        #expect((try? both[RecordID(recordName: "good-1")]?.get())?.recordID.recordName == "good-1")
        #expect(both[RecordID(recordName: "tag-blob")]?.failure?.code == .badDatabase)
        // The whole feed reads: every good record, and nothing damaged.
        let fed = try fetchAll(db, since: nil)
        #expect(fed.names == ["good-1", "good-2", "good-3"])
        #expect(try fetchAll(db, since: start).names == ["good-3"])
        // Read many times over, each bad row was logged once.
        for bad in garbage {
            #expect(DamagedRowLog.rows.filter { $0.table == "record" && $0.key.contains(bad.name) }.count == 1, "\(bad.name) logged once")
        }

        let problems = try db.checkIntegrity()
        for bad in garbage {
            #expect(problems.contains { $0.hasPrefix("damaged row:") && $0.contains(bad.name) }, "\(bad.name) in \(problems)")
        }
        #expect(!problems.contains { $0.contains("good-") })
    }

    @Test("A change row that does not decode is stepped over, on every page size, and the token moves past it")
    func theChangeFeedMovesPastGarbage() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let db = container.publicDatabase
        try db.save(note("before"))
        for garbage in ["kind, previous, at) VALUES ('_defaultZone', 'ghost', 'Note', 1, 'garbage{{', 0",
                        "kind, previous, at) VALUES ('_defaultZone', 'before', 'Note', 7, NULL, 0",
                        "kind, previous, at) VALUES ('_defaultZone', 'before', 'Note', 1, NULL, 'noon'",
                        "kind, previous, at) VALUES (x'00', 'before', 'Note', 1, NULL, 0",
                        "kind, previous, at) VALUES ('_defaultZone', 'before', 'Note', 1, '{\"text\":{\"t\":\"s\",\"v\":3}}', 0"] {
            try Self.plant(container.url, "INSERT INTO change (zone, name, type, \(garbage))")
        }
        try db.save(note("after"))
        let latest = try db.currentChangeToken()
        for limit in [1, 2, 3, 400] {
            let fed = try fetchAll(db, since: nil, limit: limit)
            #expect(fed.names.filter { $0 == "after" }.count == 1, "limit \(limit): \(fed.names)")
            #expect(fed.names.contains("before"), "limit \(limit): \(fed.names)")
            #expect(fed.token == latest, "limit \(limit)")
        }
        let problems = try db.checkIntegrity()
        #expect(problems.filter { $0.hasPrefix("damaged row: change") }.count == 5, "\(problems)")
    }

    @Test("A record over the 1 MB limit, written straight into the file, is skipped like any damaged row")
    func theSizeLimitHoldsOnRead() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let db = container.publicDatabase
        for name in ["small", "huge", "giant"] { try db.save(note(name)) }
        // 1.5 MB of text: parsed, then refused by size. 10 MB: refused before parsing.
        try Self.plant(container.url, "UPDATE record SET fields = json_object('text', json_object('t', 's', 'v', hex(zeroblob(750000)))) WHERE name = 'huge'")
        try Self.plant(container.url, "UPDATE record SET fields = json_object('text', json_object('t', 's', 'v', hex(zeroblob(5000000)))) WHERE name = 'giant'")
        #expect(try allNotes(db) == ["small"])
        #expect(try fetchAll(db, since: nil).names == ["small"])
        #expect(throws: StoreError.self) { try db.record(for: RecordID(recordName: "huge")) }
        let problems = try db.checkIntegrity()
        #expect(problems.contains { $0.contains("huge") && $0.contains("1500") })
        #expect(problems.contains { $0.contains("giant") && $0.contains("10000") })
    }

    @Test("A field mark whose options are text is skipped; queries and index marks still work")
    func garbageFieldMarks() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let db = container.publicDatabase
        try db.setIndexes([.queryable, .sortable], forField: "text", ofType: "Note")
        try db.setIndexes(.queryable, forField: "other", ofType: "Note")
        try db.save(note("n1", "x"))
        try Self.plant(container.url, "UPDATE field_mark SET options = 'x' WHERE key = 'text'")
        #expect(try db.indexes(ofType: "Note") == ["other": .queryable])
        #expect(try db.records(matching: Query(recordType: "Note", predicate: QueryPredicate(format: "text == %@", "x"))).records.count == 1)
        // The indexes the marks made are Fatchat's own: the file still opens.
        let again = try dir.container()
        #expect(try again.publicDatabase.checkIntegrity().filter { !$0.contains("field_mark") }.isEmpty)
        #expect(try again.publicDatabase.checkIntegrity().contains { $0.contains("field_mark") && $0.contains("options") })
    }

    @Test("Garbage and duplicated subscription rows: the good ones load, and one change notifies once")
    func garbageSubscriptions() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let db = container.publicDatabase
        try db.save(Subscription(subscriptionID: "s1", recordType: "Note", options: .firesOnRecordCreation))
        let owner = container.currentUserRecordID.recordName
        try Self.plant(container.url, """
            INSERT INTO subscription (owner, id, body) VALUES ('\(owner)', 'a-garbage', 'garbage{{');
            INSERT INTO subscription (owner, id, body) VALUES ('\(owner)', 'b-array', '[]');
            INSERT INTO subscription (owner, id, body) VALUES ('\(owner)', 'c-blob', x'00ff');
            INSERT INTO subscription (owner, id, body) SELECT owner, 'd-mismatch', body FROM subscription WHERE id = 's1';
            INSERT INTO subscription (owner, id, body) SELECT owner, 's2', json_set(body, '$.id', 's2') FROM subscription WHERE id = 's1';
            INSERT INTO subscription (owner, id, body) SELECT owner, 'e-huge', json_set(body, '$.id', 'e-huge', '$.pad', hex(zeroblob(40000)))
                FROM subscription WHERE id = 's1';
            """)
        let loaded = try db.allSubscriptions()
        #expect(loaded.map(\.subscriptionID) == ["s1", "s2"])
        let start = try db.currentChangeToken()
        try db.save(note("n1"))
        let changes = try db.fetchChanges(since: start).changes
        #expect(Subscription.evaluate(changes, subscriptions: loaded).notifications.count == 2, "CloudKit's rule: one per subscription")
        let capped = Subscription.evaluate(changes, subscriptions: loaded, atMostOnePerChange: true).notifications
        #expect(capped.map(\.subscriptionID) == ["s1"])
        let problems = try db.checkIntegrity()
        for id in ["a-garbage", "b-array", "c-blob", "d-mismatch", "e-huge"] {
            #expect(problems.contains { $0.hasPrefix("damaged row: subscription") && $0.contains(id) }, "\(id): \(problems)")
        }
    }

    @Test("A planted trigger, view, table or index is refused on open, named, and listed by the check", arguments: [
        ("trigger", "evil_rewrite", "CREATE TRIGGER evil_rewrite AFTER INSERT ON record BEGIN UPDATE record SET fields = '{}' WHERE id = new.id; END"),
        ("view", "evil_view", "CREATE VIEW evil_view AS SELECT * FROM record"),
        ("table", "evil_table", "CREATE TABLE evil_table (x)"),
        ("index", "evil_unique", "CREATE UNIQUE INDEX evil_unique ON record (type)"),
        ("index", "record_q:Note:text", "CREATE INDEX \"record_q:Note:text\" ON record (type) WHERE type = 'Note'"),
    ])
    func plantedSchemaIsRefused(kind: String, name: String, sql: String) throws {
        let dir = try TemporaryDirectory()
        let url: URL
        do {
            let container = try dir.container()
            try container.publicDatabase.save(note("n1"))
            url = container.url
        }
        try Self.plant(url, sql)
        do {
            _ = try dir.container()
            Issue.record("a \(kind) planted in the file was accepted")
        } catch let error as StoreError {
            #expect(error.code == .badDatabase)
            #expect(error.message.contains("\(kind) '\(name)'"), "\(error.message)")
        }
        let problems = try RecordDatabase.checkPublicDatabase(inContainer: url)
        #expect(problems.contains { $0.hasPrefix("schema:") && $0.contains("\(kind) '\(name)'") }, "\(problems)")
    }

    @Test("A trigger planted while a client runs is refused before its next write, so it never fires")
    func aTriggerPlantedLaterNeverFires() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let db = container.publicDatabase
        try db.save(note("n1", "mine"))
        try Self.plant(container.url, "CREATE TRIGGER deface AFTER INSERT ON record BEGIN UPDATE record SET fields = '{\"text\":{\"t\":\"s\",\"v\":\"defaced\"}}'; END")
        #expect {
            try db.save(note("n2", "also mine"))
        } throws: { error in
            (error as? StoreError)?.message.contains("trigger 'deface'") == true
        }
        #expect(try db.record(for: RecordID(recordName: "n1"))["text"] == "mine")
        #expect((try? db.record(for: RecordID(recordName: "n2"))) == nil)
    }

    @Test("Fatchat's own schema, field-mark indexes and full-text tables included, passes the check with no problem")
    func ourOwnSchemaPasses() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let db = container.publicDatabase
        try db.setIndexes([.queryable, .sortable, .searchable], forField: "text", ofType: "Note")
        try db.setIndexes(.sortable, forField: "n", ofType: "Other_Type2")
        try db.save(note("n1"))
        try db.save(Subscription(subscriptionID: "s1", recordType: "Note", options: .firesOnRecordCreation))
        #expect(try db.checkIntegrity() == [])
        #expect(try RecordDatabase.checkPublicDatabase(inContainer: container.url) == [])
        let reopened = try dir.container()
        try reopened.publicDatabase.save(note("n2"))
        #expect(try reopened.publicDatabase.checkIntegrity() == [])
    }

    @Test("A damaged child does not block its parent's cascading delete")
    func aDamagedChildIsDeletedWithItsParent() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let db = container.publicDatabase
        let parent = Record(recordType: "Channel", recordID: RecordID(recordName: "parent"))
        try db.save(parent)
        var child = note("child")
        child["parent"] = .reference(Reference(recordID: parent.recordID, action: .deleteSelf))
        try db.save(child)
        try Self.plant(container.url, "UPDATE record SET created = 'never' WHERE name = 'child'")
        try db.deleteRecord(withID: parent.recordID)
        #expect(try db.records(for: [parent.recordID, child.recordID]).values.allSatisfy { $0.failure?.code == .unknownItem })
    }
}
