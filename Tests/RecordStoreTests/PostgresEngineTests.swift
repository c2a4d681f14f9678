import Foundation
import ProcessTestKit
import Synchronization
import Testing
@testable import RecordStore

/// The `postgresql` engine against a real server: what only it does (the schema, indexes, search, its errors).
@Suite(.startsProcesses, .enabled(if: PostgresCluster.shouldRun, "\(PostgresCluster.unavailableReason ?? "")"))
struct PostgresEngineTests {
    @Test("An asset is stored on the server once, reaches a client with an assets folder of its own, and goes when no record uses it")
    func assetsLiveOnTheServer() throws {
        let dir = try TemporaryDirectory()
        let first = try dir.container("first", engine: .postgresql)
        let descriptor = try JSONSerialization.jsonObject(with: Data(contentsOf: first.url.appendingPathComponent("container.json"))) as? [String: Any]
        let url = try #require(descriptor?["postgresURL"] as? String)
        let database = try PostgresEndpoint(url: url).database
        func server(_ sql: String) throws -> String { try PostgresCluster.shared().psql(sql, database: database) }

        let content = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) })
        for name in ["one.bin", "two.bin"] { try content.write(to: dir.path(name)) }
        var a = Record(recordType: "Attachment"), b = Record(recordType: "Attachment")
        a["file"] = .asset(Asset(fileURL: dir.path("one.bin")))
        b["file"] = .asset(Asset(fileURL: dir.path("two.bin")))
        try first.publicDatabase.modifyRecords(saving: [a, b], deleting: []).check()
        #expect(try server("SELECT count(*), sum(length(content)) FROM fatchat.asset") == "1|\(content.count)", "stored once")

        // Another host: the same database, a container folder of its own with nothing in its assets/.
        var options = Container.Options(privateDataDirectory: dir.path("private-second"))
        options.engine = .postgresql
        options.postgresURL = url
        let second = try Container.create(at: dir.path("second"), access: .umask, options: options)
        let fetched = try #require(try second.publicDatabase.record(for: a.recordID)["file"]?.assetValue)
        #expect(fetched.fileURL.path.hasPrefix(second.url.path))
        #expect(try Data(contentsOf: fetched.fileURL) == content)

        // The server refuses content under a name that is not its hash.
        #expect(throws: PostgresCluster.Failure.self) {
            try server("INSERT INTO fatchat.asset (hash, content) VALUES (repeat('a', 64), 'planted')")
        }

        try second.publicDatabase.deleteRecord(withID: a.recordID)
        #expect(try server("SELECT count(*) FROM fatchat.asset") == "1", "b still uses it")
        try first.publicDatabase.deleteRecord(withID: b.recordID)
        #expect(try server("SELECT count(*) FROM fatchat.asset") == "0")
    }

    @Test("Records, references, a cascading delete and the change feed go through the server")
    func savesQueriesCascadesAndFeedsChanges() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: .postgresql)
        #expect(container.engine == .postgresql)
        let db = container.publicDatabase
        let start = try db.currentChangeToken()

        let channel = Record(recordType: "Channel", recordID: RecordID(recordName: "general"))
        var messages: [Record] = []
        for i in 0..<30 {
            var m = Record(recordType: "Message", recordID: RecordID(recordName: "m\(i)"))
            m["channel"] = .reference(Reference(recordID: channel.recordID, action: .deleteSelf))
            m["text"] = .string("hello número \(i) café")
            m["n"] = .int64(Int64(i))
            m.creationDate = Date(timeIntervalSince1970: 1_700_000_000 + Double(i / 3))
            messages.append(m)
        }
        try db.modifyRecords(saving: [channel] + messages, deleting: []).check()
        try db.setIndexes(.queryable, forField: "channel", ofType: "Message")
        try db.setIndexes(.searchable, forField: "text", ofType: "Message")

        // Newest first in pages of 7 with a keyset cursor: every message once, in order.
        let query = Query(recordType: "Message", predicate: try QueryPredicate(format: "channel == %@", channel.recordID), sortDescriptors: [.newestFirst])
        var page = try db.records(matching: query, resultsLimit: 7)
        var seen = page.records.compactMap { $0["n"]?.int64Value }
        while let cursor = page.cursor {
            page = try db.records(continuing: cursor, resultsLimit: 7)
            seen += page.records.compactMap { $0["n"]?.int64Value }
        }
        #expect(seen == (0..<30).reversed().map(Int64.init))

        // Comparisons, IN, BEGINSWITH and token search (accents folded, as on SQLite).
        let some = try db.records(matching: Query(recordType: "Message", predicate: try QueryPredicate(format: "n >= 10 AND n < 13"),
                                                  sortDescriptors: [try QuerySortDescriptor(key: "n")]))
        #expect(some.records.compactMap { $0["n"]?.int64Value } == [10, 11, 12])
        let among = try db.records(matching: Query(recordType: "Message", predicate: try QueryPredicate(format: "n IN %@", [3, 5, 99])))
        #expect(Set(among.records.compactMap { $0["n"]?.int64Value }) == [3, 5])
        let prefix = try db.records(matching: Query(recordType: "Message", predicate: try QueryPredicate(format: "text BEGINSWITH %@", "hello número 2")))
        #expect(Set(prefix.records.compactMap { $0["n"]?.int64Value }) == [2, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29])
        let found = try db.records(matching: Query(recordType: "Message", predicate: try QueryPredicate(format: "self CONTAINS %@", "CAFE numero 7")))
        #expect(found.records.compactMap { $0["n"]?.int64Value } == [7])
        #expect(try db.countRecords(matching: Query(recordType: "Message", predicate: try QueryPredicate(format: "NOT (n < 25)"))) == 5)

        // Deleting the channel deletes its messages in the same transaction, each in the change feed.
        try db.deleteRecord(withID: channel.recordID)
        #expect(try db.records(matching: Query(recordType: "Message")).records.isEmpty)
        var batch = try db.fetchChanges(since: start, limit: 1_000)
        var deleted = Set(batch.deletedRecords.map(\.recordID.recordName))
        while batch.moreComing {
            batch = try db.fetchChanges(since: batch.token, limit: 1_000)
            deleted.formUnion(batch.deletedRecords.map(\.recordID.recordName))
        }
        #expect(deleted == Set(["general"] + (0..<30).map { "m\($0)" }))
    }

    @Test("Saving a record again replaces its references and asset uses, and leaves one row of each it keeps")
    func aSavedAgainRecordKeepsOneRowPerLink() throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: .postgresql).publicDatabase
        let server = try serverOf(dir)
        let first = Record(recordType: "Channel", recordID: RecordID(recordName: "first"))
        let second = Record(recordType: "Channel", recordID: RecordID(recordName: "second"))
        try Data("attached".utf8).write(to: dir.path("file.bin"))
        var message = Record(recordType: "Message", recordID: RecordID(recordName: "m"))
        message["channel"] = .reference(Reference(recordID: first.recordID, action: .deleteSelf))
        message["file"] = .asset(Asset(fileURL: dir.path("file.bin")))
        message["text"] = .string("one")
        try db.modifyRecords(saving: [first, second, message], deleting: []).check()
        let links = "SELECT (SELECT string_agg(target, ',') FROM fatchat.reference) || '|' || (SELECT count(*) FROM fatchat.asset_use)"
        #expect(try server(links) == "first|1")

        // The same reference and asset again: the save replaces both rows (asset uses are unique per record).
        var edited = try db.record(for: message.recordID)
        edited["text"] = .string("two")
        edited = try db.save(edited)
        #expect(try server(links) == "first|1")

        // Moved to the other channel, the message goes with that one, not the first.
        edited["channel"] = .reference(Reference(recordID: second.recordID, action: .deleteSelf))
        try db.save(edited)
        #expect(try server(links) == "second|1")
        try db.deleteRecord(withID: first.recordID)
        #expect(try db.record(for: message.recordID)["text"]?.stringValue == "two")
        try db.deleteRecord(withID: second.recordID)
        #expect((#expect(throws: StoreError.self) { try db.record(for: message.recordID) })?.code == .unknownItem)
    }

    @Test("The change log keeps its newest entries, whether a commit logs fewer of them than it keeps or more")
    func theLogIsPrunedToItsNewestEntries() throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: .postgresql, historyLimit: 3).publicDatabase
        let server = try serverOf(dir)
        let log = "SELECT count(*) || '|' || (max(seq) - min(seq) + 1) || '|' || (max(seq) - (SELECT value::bigint FROM fatchat.meta WHERE key = 'pruned_through')) FROM fatchat.change"
        let before = try db.currentChangeToken()
        let batch = (0..<5).map { Record(recordType: "Note", recordID: RecordID(recordName: "batch-\($0)")) }
        try db.modifyRecords(saving: batch, deleting: []).check()
        #expect(try server(log) == "3|3|3", "five entries in one commit, the log keeps three")
        #expect((#expect(throws: StoreError.self) { try db.fetchChanges(since: before) })?.code == .changeTokenExpired)
        for _ in 0..<2 { try db.save(Record(recordType: "Note")) }
        #expect(try server(log) == "3|3|3", "one entry per commit, pruned with it")
        let recent = try db.currentChangeToken()
        let last = try db.save(Record(recordType: "Note"))
        #expect(try db.fetchChanges(since: recent).changes.map(\.recordID) == [last.recordID])
        #expect(try db.fetchChanges(in: last.recordID.zoneID, since: recent).changes.map(\.recordID) == [last.recordID], "the feed of one zone")
    }

    @Test("A save takes the write lock before it looks up: it waits while another writer holds the lock")
    func aSaveWaitsForTheWriteLock() throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: .postgresql).publicDatabase
        try db.save(Record(recordType: "Note"))
        let holder = try #require(try (dir.container(engine: .postgresql).publicDatabase.storage as? LazyStorage)?.storage() as? PostgresStorage)
        // Another writer's transaction, left open on its connection with the lock held.
        try holder.session.withLink { link in
            try link.execute("BEGIN")
            try link.execute("SELECT pg_advisory_xact_lock($1)", PostgresSchema.writeLockBinds)
        }
        let saved = DispatchSemaphore(value: 0)
        let note = Record(recordType: "Note")
        Thread {
            _ = try? db.save(note)
            saved.signal()
        }.start()
        #expect(saved.wait(timeout: .now() + 0.5) == .timedOut, "the save waits for the lock")
        try holder.session.withLink { link in try link.execute("COMMIT") }
        #expect(saved.wait(timeout: .now() + 30) == .success)
        #expect(try db.record(for: note.recordID).recordType == "Note")
    }

    @Test("A database an older build made is upgraded when its administrator opens it; until then, other roles' clients save as that build did")
    func anOlderSchemaIsUpgradedByItsAdministrator() throws {
        let dir = try TemporaryDirectory()
        let channel = Record(recordType: "Channel", recordID: RecordID(recordName: "general"))
        try dir.container(engine: .postgresql).publicDatabase.save(channel)
        let server = try serverOf(dir)
        // As the first build left it: schema 1, without the functions a commit calls now.
        try server("DROP FUNCTION fatchat.look_up_locked, fatchat.save_guessed, fatchat.save_batch, fatchat.feed; UPDATE fatchat.meta SET value = '1' WHERE key = 'schema'")
        // Root's role stops being the administrator, as any member is not.
        try PostgresCluster.shared().createRole("fcarchivist")
        try server("ALTER TABLE fatchat.record OWNER TO fcarchivist")

        func open() throws -> (db: RecordDatabase, storage: PostgresStorage) {
            let db = try dir.container(engine: .postgresql).publicDatabase
            return (db, try #require(try (db.storage as? LazyStorage)?.storage() as? PostgresStorage))
        }
        func message(_ name: String) -> Record {
            var message = Record(recordType: "Message", recordID: RecordID(recordName: name))
            message["channel"] = .reference(Reference(recordID: channel.recordID, action: .deleteSelf))
            return message
        }
        let member = try open()
        #expect(member.storage.schemaVersion == 1)
        try member.db.save(message("by-member"))
        #expect(try member.db.fetchChanges(since: nil).changedRecords.map(\.recordID.recordName) == ["general", "by-member"])
        #expect(try prepared(member.storage) == ["fatchat_feed_statement", "fatchat_look_up", "fatchat_save_beside", "fatchat_save_records"])
        #expect(try server("SELECT value FROM fatchat.meta WHERE key = 'schema'") == "1", "a member cannot upgrade it")

        try server("ALTER TABLE fatchat.record OWNER TO root")
        let administrator = try open()
        #expect(administrator.storage.schemaVersion == PostgresSchema.version)
        #expect(try server("SELECT value FROM fatchat.meta WHERE key = 'schema'") == String(PostgresSchema.version))
        try administrator.db.save(message("by-administrator"))
        try administrator.db.save(message("guessed"))
        #expect(try administrator.db.fetchChanges(since: nil).changedRecords.map(\.recordID.recordName) == ["general", "by-member", "by-administrator", "guessed"])
        #expect(try prepared(administrator.storage) == ["fatchat_feed", "fatchat_look_up_locked", "fatchat_save_batch", "fatchat_save_guessed"],
                "the first message looks up, and learns the searchable keys the second one's guess needs")
        // Both messages hang off the channel: deleting it takes both, whichever way each was saved.
        try administrator.db.deleteRecord(withID: channel.recordID)
        #expect(try administrator.db.countRecords(matching: Query(recordType: "Message")) == 0)
        #expect(try member.db.save(Record(recordType: "Note")).recordType == "Note", "the member's client goes on as it began")
    }

    @Test("A database of schema 2 or 3 gets this build's guessed save when its administrator opens it", arguments: [2, 3])
    func aSchemaTwoOrThreeDatabaseIsUpgraded(from version: Int) throws {
        let dir = try TemporaryDirectory()
        try dir.container(engine: .postgresql).publicDatabase.save(Record(recordType: "Note"))
        let server = try serverOf(dir)
        // Schema 2 had no save_guessed. Schema 3's is stood in for by one that refuses every guess, so each save looks up again.
        try server(version == 2 ? "DROP FUNCTION fatchat.save_guessed" : """
            DO $$ BEGIN EXECUTE replace(pg_get_functiondef('fatchat.save_guessed'::regproc), 'PERFORM pg_advisory_xact_lock',
                'RAISE EXCEPTION ''an older body'' USING ERRCODE = ''\(PostgresWriteSQL.guessFailed)''; PERFORM pg_advisory_xact_lock'); END $$
            """)
        try server("UPDATE fatchat.meta SET value = '\(version)' WHERE key = 'schema'")
        let thisBuilds = "SELECT count(*) FROM pg_proc WHERE proname = 'save_guessed' AND prosrc NOT LIKE '%an older body%'"
        #expect(try server(thisBuilds) == "0")
        let db = try dir.container(engine: .postgresql).publicDatabase
        _ = try db.save(Record(recordType: "Note"))
        _ = try db.save(Record(recordType: "Note"))
        #expect(try server("SELECT value FROM fatchat.meta WHERE key = 'schema'") == String(PostgresSchema.version))
        #expect(try server(thisBuilds) == "1")
        #expect(try db.countRecords(matching: Query(recordType: "Note")) == 3)
    }

    @Test("A save made on a guess that no longer holds is made again on what is stored: a taken name, a missing target, a field newly searchable or no longer")
    func aWrongGuessIsCorrected() throws {
        let dir = try TemporaryDirectory()
        let guesser = try dir.container(engine: .postgresql).publicDatabase
        let other = try dir.container(engine: .postgresql).publicDatabase
        let channel = try guesser.save(Record(recordType: "Channel", recordID: RecordID(recordName: "general")))
        func message(_ name: String, text: String, in target: RecordID = channel.recordID) -> Record {
            var message = Record(recordType: "Message", recordID: RecordID(recordName: name))
            message["channel"] = .reference(Reference(recordID: target, action: .deleteSelf))
            message["text"] = .string(text)
            return message
        }
        // The first message looks up, and the guesser learns that no Message field is searchable.
        _ = try guesser.save(message("first", text: "hello"))

        // Another client takes a name first: the guess "nothing stored" is wrong, and the save is refused as it would be on a look-up.
        _ = try other.save(message("taken", text: "theirs"))
        let clash = #expect(throws: StoreError.self) { try guesser.save(message("taken", text: "mine")) }
        #expect(clash?.code == .serverRecordChanged)
        #expect(try other.record(for: RecordID(recordName: "taken"))["text"]?.stringValue == "theirs")

        // A target that does not exist.
        let dangling = #expect(throws: StoreError.self) { try guesser.save(message("lost", text: "where", in: RecordID(recordName: "nowhere"))) }
        #expect(dangling?.code == .referenceViolation)
        #expect(try guesser.countRecords(matching: Query(recordType: "Message")) == 2)

        // Another client makes `text` searchable: the next message's search words are made of it.
        try other.setIndexes(.searchable, forField: "text", ofType: "Message")
        _ = try guesser.save(message("zebra", text: "a zebra passes"))
        let found = try other.records(matching: Query(recordType: "Message", predicate: try QueryPredicate(format: "self CONTAINS %@", "zebra")))
        #expect(found.records.map(\.recordID.recordName) == ["zebra"])
        // And a guess that holds saves as before.
        _ = try guesser.save(message("okapi", text: "an okapi too"))
        #expect(try other.records(matching: Query(recordType: "Message", predicate: try QueryPredicate(format: "self CONTAINS %@", "okapi"))).records.count == 1)
        // The other way: `text` stops being searchable, and the next message has no search words.
        try other.setIndexes([], forField: "text", ofType: "Message")
        _ = try guesser.save(message("quagga", text: "a quagga"))
        #expect(try other.records(matching: Query(recordType: "Message", predicate: try QueryPredicate(format: "self CONTAINS %@", "quagga"))).records.isEmpty)
        #expect(try guesser.countRecords(matching: Query(recordType: "Message")) == 5)
    }

    @Test("A guess is checked even when the transaction reads before its saves go")
    func aGuessOutlivesAReadBeforeTheSaves() throws {
        let dir = try TemporaryDirectory()
        let other = try dir.container(engine: .postgresql).publicDatabase
        var theirs = Record(recordType: "Message", recordID: RecordID(recordName: "taken"))
        theirs["text"] = .string("theirs")
        _ = try other.save(theirs)
        // The guesser's first write marks a field searchable, so it knows the type's searchable keys
        // before any save; its first save still has to read whether the zone keeps a change log.
        let guesser = try dir.container(engine: .postgresql).publicDatabase
        try guesser.setIndexes(.searchable, forField: "text", ofType: "Message")
        var mine = Record(recordType: "Message", recordID: RecordID(recordName: "taken"))
        mine["text"] = .string("mine")
        let clash = #expect(throws: StoreError.self) { try guesser.save(mine) }
        #expect(clash?.code == .serverRecordChanged)
        #expect(try other.record(for: theirs.recordID)["text"]?.stringValue == "theirs")
    }

    /// Runs SQL through psql on the server database of the container in `dir`, as its administrator.
    /// The statements of a commit and of the feed that `storage`'s connection has prepared.
    private func prepared(_ storage: PostgresStorage) throws -> [String] {
        try storage.session.withLink { link in
            try link.rows("SELECT name FROM pg_prepared_statements WHERE name ~ '^fatchat_(save|look|feed)' ORDER BY name")
                .map { try PostgresColumns($0).text(0, "name") }
        }
    }

    private func serverOf(_ dir: TemporaryDirectory, _ name: String = "container") throws -> (String) throws -> String {
        let descriptor = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.path(name).appendingPathComponent("container.json"))) as? [String: Any]
        let database = try PostgresEndpoint(url: try #require(descriptor?["postgresURL"] as? String)).database
        return { sql in try PostgresCluster.shared().psql(sql, database: database) }
    }

    @Test("A quiet commit notifies no listener; the next ordinary one does, and the feed holds both; a schema-4 database learns this when its administrator opens it",
          arguments: [5, 4])
    func aQuietCommitNotifiesNoListener(schema: Int) throws {
        let dir = try TemporaryDirectory()
        var db = try dir.container(engine: .postgresql).publicDatabase
        if schema == 4 {
            // Schema 4's trigger notified every commit.
            let server = try serverOf(dir)
            try server("""
                CREATE OR REPLACE FUNCTION fatchat.notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM pg_notify('\(PostgresSchema.channel)', (SELECT max(seq) FROM inserted)::text); RETURN NULL; END $$
                """)
            try server("UPDATE fatchat.meta SET value = '4' WHERE key = 'schema'")
            db = try dir.container(engine: .postgresql).publicDatabase
            #expect(try server("SELECT value FROM fatchat.meta WHERE key = 'schema'") == String(PostgresSchema.version))
        }
        // A first save of the type teaches the client its searchable keys, so the next new one is saved on a guess.
        _ = try db.save(Record(recordType: "Presence", recordID: RecordID(recordName: "presence.loud")))
        let signal = try db.makeChangeSignal()
        let pushes = Mutex(0)
        signal.onPush { pushes.withLock { $0 += 1 } }
        #expect(try signal.hasChanged(), "the first question is always answered yes")
        let heartbeat = Record(recordType: "Presence", recordID: RecordID(recordName: "presence.quiet"))
        // A new record saved on a guess, and then a save that replaces it, which looks it up first.
        try QuietCommits.quietly { _ = try db.save(heartbeat) }
        let storage = try #require(try (db.storage as? LazyStorage)?.storage() as? PostgresStorage)
        #expect(try prepared(storage).contains("fatchat_save_guessed"), "the quiet new record went on a guess")
        let saved = try db.record(for: heartbeat.recordID)
        try QuietCommits.quietly { _ = try db.save(saved) }
        Thread.sleep(forTimeInterval: 0.5)
        #expect(pushes.withLock { $0 } == 0)
        #expect(try signal.hasChanged() == false)

        _ = try db.save(Record(recordType: "Note", recordID: RecordID(recordName: "loud")))
        let deadline = Date().addingTimeInterval(5)
        while pushes.withLock({ $0 }) == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(pushes.withLock { $0 } >= 1)
        #expect(try signal.hasChanged())
        #expect(try db.fetchChanges(since: nil).changedRecords.map(\.recordID.recordName) == ["presence.loud", "presence.quiet", "loud"])
    }

    @Test("A client listens on the one connection it fetches on, and listens again on the next when the server drops it")
    func aClientListensOnTheConnectionItFetchesOn() throws {
        let dir = try TemporaryDirectory()
        let writer = try dir.container(engine: .postgresql).publicDatabase
        let reader = try dir.container(engine: .postgresql).publicDatabase
        let server = try serverOf(dir)
        let signal = try reader.makeChangeSignal()
        let pushes = Mutex(0)
        signal.onPush { pushes.withLock { $0 += 1 } }
        func pushed(beyond count: Int) -> Bool {
            let deadline = Date().addingTimeInterval(10)
            while pushes.withLock({ $0 }) <= count, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            return pushes.withLock { $0 } > count
        }
        /// A save by the writer, whose connection the server may have dropped: its first statement then fails, and the next connects.
        func write(_ name: String) throws {
            for attempt in 1...3 {
                do {
                    _ = try writer.save(Record(recordType: "Note", recordID: RecordID(recordName: name)))
                    return
                } catch let error as StoreError where error.code == .serviceUnavailable && attempt < 3 {}
            }
        }
        _ = try signal.hasChanged()
        try write("first")
        #expect(pushed(beyond: 0), "the notification of the writer's commit came")
        #expect(try signal.hasChanged())
        #expect(try reader.fetchChanges(since: nil).changedRecords.map(\.recordID.recordName) == ["first"])
        let backends = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
        #expect(try server(backends) == "2", "one connection for the reader, listening and fetching, and one for the writer")

        let heard = pushes.withLock { $0 }
        _ = try server("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
        #expect(pushed(beyond: heard), "losing the connection that listened wakes the reader")
        #expect(try signal.hasChanged(), "while no connection listens, a fetch is always due")
        #expect(try reader.fetchChanges(since: nil).changedRecords.map(\.recordID.recordName) == ["first"])
        let relistened = pushes.withLock { $0 }
        try write("second")
        #expect(pushed(beyond: relistened), "the next connection listens too")
        #expect(try signal.hasChanged())
        #expect(try server(backends) == "2")
    }

    @Test("A transaction that saves more records than the write buffer holds sends them as it goes, and the change log keeps their order")
    func aLongTransactionSendsItsBufferAsItGoes() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: .postgresql)
        let db = container.publicDatabase
        let count = PostgresWriteBuffer.limit * 2 + 7
        var held: [Int] = []
        // As a migration writes: every record of a container in one transaction.
        try db.storage.write { writer in
            let buffer = try #require((writer as? PostgresAccess)?.buffer)
            for index in 0..<count {
                var note = Record(recordType: "Note", recordID: RecordID(recordName: "note-\(index)"))
                note["n"] = .int64(Int64(index))
                note.creationDate = Date()
                note.modificationDate = note.creationDate
                note.recordChangeTag = "t\(index)"
                note.creatorUserRecordID = container.currentUserRecordID
                note.lastModifiedUserRecordID = container.currentUserRecordID
                try writer.upsert(note, isNew: true)
                try writer.appendChange(note.recordID, type: "Note", kind: .created, previousFields: nil, date: Date())
                held.append(buffer.saves.count)
            }
        }
        #expect(held.max() ?? 0 < PostgresWriteBuffer.limit, "the buffer was sent each time it filled")
        #expect(try db.countRecords(matching: Query(recordType: "Note")) == count)
        var logged: [String] = []
        var token: ChangeToken?
        repeat {
            let batch = try db.fetchChanges(since: token)
            logged += batch.changes.map(\.recordID.recordName)
            token = batch.token
            if !batch.moreComing { break }
        } while true
        #expect(logged == (0..<count).map { "note-\($0)" }, "change rows numbered in the order they were logged")
    }

    @Test("Erasing everything on the server reports its progress and leaves no record, change or subscription")
    func eraseAllReportsProgress() throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: .postgresql).publicDatabase
        let notes = (0..<40).map { index in
            var note = Record(recordType: "Note")
            note["n"] = .int64(Int64(index))
            return note
        }
        try db.modifyRecords(saving: notes, deleting: []).check()
        _ = try db.save(Subscription(subscriptionID: "notes", recordType: "Note", options: .firesOnRecordCreation))

        var reports: [ErasureProgress] = []
        try db.eraseAll { reports.append($0) }
        let total = try #require(reports.first).total
        #expect(total >= 80, "40 records and their changes: \(reports)")
        #expect(reports.map(\.done) == [0, 40, total], "\(reports)")
        #expect(try db.countRecords(matching: Query(recordType: "Note")) == 0)
        #expect(try db.allSubscriptions().isEmpty)
        #expect(#expect(throws: StoreError.self) { try db.fetchChanges(since: nil) }?.code == .changeTokenExpired)
    }

    @Test("A statement sent without waiting that fails still fails its save, with the server's message, and undoes it whole")
    func aFailureOfAStatementNotWaitedForFailsTheSave() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: .postgresql)
        let db = container.publicDatabase
        let descriptor = try JSONSerialization.jsonObject(with: Data(contentsOf: container.url.appendingPathComponent("container.json"))) as? [String: Any]
        let database = try PostgresEndpoint(url: try #require(descriptor?["postgresURL"] as? String)).database
        // The change-log INSERT is sent with no wait; make the server refuse it for one record.
        try PostgresCluster.shared().psql("""
            CREATE FUNCTION public.refuse_doomed() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.name = 'doomed' THEN RAISE EXCEPTION 'no change row for doomed'; END IF; RETURN NEW; END $$;
            CREATE TRIGGER refuse_doomed BEFORE INSERT ON fatchat.change FOR EACH ROW EXECUTE FUNCTION public.refuse_doomed();
            """, database: database)

        let channel = Record(recordType: "Channel", recordID: RecordID(recordName: "general"))
        var doomed = Record(recordType: "Message", recordID: RecordID(recordName: "doomed"))
        doomed["channel"] = .reference(Reference(recordID: channel.recordID, action: .deleteSelf))
        try db.save(channel)
        let error = #expect(throws: StoreError.self) { try db.save(doomed) }
        #expect(error?.message.contains("no change row for doomed") == true, "\(String(describing: error))")
        #expect(try db.storage.read { try $0.exists(doomed.recordID) } == false, "the record row went with the failed change row")

        // In a batch that is not atomic the failure comes in after later items were sent: the server
        // aborted the transaction, so the batch fails whole rather than reporting items saved that were not.
        var before = Record(recordType: "Message", recordID: RecordID(recordName: "before"))
        before["channel"] = .reference(Reference(recordID: channel.recordID, action: .deleteSelf))
        var after = Record(recordType: "Message", recordID: RecordID(recordName: "after"))
        after["channel"] = .reference(Reference(recordID: channel.recordID, action: .deleteSelf))
        let batchError = #expect(throws: StoreError.self) {
            try db.modifyRecords(saving: [before, doomed, after], deleting: [], atomically: false)
        }
        #expect(batchError?.message.contains("no change row for doomed") == true, "\(String(describing: batchError))")
        for id in [before.recordID, doomed.recordID, after.recordID] {
            #expect(try db.storage.read { try $0.exists(id) } == false, "\(id.recordName) is not stored")
        }

        // The connection goes on: the next saves and reads work, references included.
        var fine = Record(recordType: "Message", recordID: RecordID(recordName: "fine"))
        fine["channel"] = .reference(Reference(recordID: channel.recordID, action: .deleteSelf))
        try db.save(fine)
        try db.deleteRecord(withID: channel.recordID)
        #expect(try db.storage.read { try $0.exists(fine.recordID) } == false, "the cascade found fine's reference row")
    }

    @Test("A queryable mark is an expression index the server uses for a channel's newest page")
    func queryableMarkIsAnExpressionIndex() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: .postgresql)
        let db = container.publicDatabase
        try db.setIndexes(.queryable, forField: "channel", ofType: "Message")
        let channel = RecordID(recordName: "general")
        let query = Query(recordType: "Message", predicate: try QueryPredicate(format: "channel == %@", channel), sortDescriptors: [.newestFirst])
        let plan = try db.storage.read { reader in
            try (reader as? PostgresAccess)?.link.execute("SET LOCAL enable_seqscan = off")
            return try (reader as? PostgresAccess)?.queryPlan(QueryRequest(query: query, zone: nil, desiredKeys: nil, after: nil, limit: 50)) ?? []
        }
        #expect(plan.contains { $0.contains("record_q_") }, "plan: \(plan)")
        try db.setIndexes([], forField: "channel", ofType: "Message")
        let indexes = try db.storage.read { reader in
            try (reader as? PostgresAccess)?.link.rows("SELECT indexname FROM pg_indexes WHERE schemaname = 'fatchat' AND indexname LIKE 'record_q_%'").count ?? -1
        }
        #expect(indexes == 0)
    }

    @Test("A server that is down gives serviceUnavailable with its address, and the container still opens")
    func downServerIsAClearTransientError() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        try cluster.createRole("root")
        let dir = try TemporaryDirectory()
        var options = Container.Options(privateDataDirectory: dir.path("private-data"))
        options.engine = .postgresql
        options.postgresURL = cluster.url
        _ = try Container.create(at: dir.path("container"), access: .umask, options: options)
        try cluster.kill()

        // The client opens (its private database is local) and learns the server is down only when it uses it.
        let container = try Container(url: dir.path("container"), options: Container.Options(create: false, privateDataDirectory: dir.path("private-data")))
        let error = #expect(throws: StoreError.self) { try container.publicDatabase.save(Record(recordType: "Note")) }
        #expect(error?.code == .serviceUnavailable)
        #expect(error?.isTransient == true)
        #expect(error?.message.contains(cluster.directory) == true, "\(error?.message ?? "")")
        #expect(try container.privateDatabase.save(Record(recordType: "Note")).recordType == "Note")

        // Back up, the same container works without reopening.
        try cluster.start()
        #expect(try container.publicDatabase.save(Record(recordType: "Note")).recordType == "Note")
    }

    @Test("A save's statements and the change feed's read are prepared once per connection; a connection whose prepared read fails is made again")
    func theFeedIsPreparedOncePerConnection() throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: .postgresql).publicDatabase
        let storage = try #require(try (db.storage as? LazyStorage)?.storage() as? PostgresStorage)
        func onServer(_ sql: String) throws -> [String] {
            try storage.session.withLink { link in try link.rows(sql).map { try PostgresColumns($0).text(0, "answer") } }
        }
        let prepared = "SELECT name FROM pg_prepared_statements WHERE name LIKE 'fatchat_feed%' ORDER BY name"
        let writes = "SELECT name FROM pg_prepared_statements WHERE name NOT LIKE 'fatchat_feed%' ORDER BY name"
        #expect(try onServer(prepared) == [], "nothing is prepared before the first read")

        let saved = try db.save(Record(recordType: "Note"))
        #expect(try onServer(writes) == ["fatchat_look_up_locked", "fatchat_save_batch"], "a save's two calls: the lock and the marks come with the look-up, and one call saves")
        #expect(try db.save(Record(recordType: "Note")).recordType == "Note")
        #expect(try onServer(writes) == ["fatchat_look_up_locked", "fatchat_save_batch", "fatchat_save_guessed"],
                "a second new Note is saved on a guess, in one call")
        let edited = try db.save(saved)
        #expect(edited.recordChangeTag != saved.recordChangeTag, "an edit looks up, with the statements prepared already")
        let first = try db.fetchChanges(since: nil, limit: 1)
        #expect(first.changes.map(\.recordID) == [saved.recordID])
        let backend = try onServer("SELECT pg_backend_pid()::text")
        #expect(try onServer(prepared) == ["fatchat_feed"])
        #expect(try db.fetchChanges(since: first.token).changes.count == 2, "the second Note and the edit")
        #expect(try onServer(prepared) == ["fatchat_feed"], "prepared once, on the same connection")
        #expect(try onServer("SELECT pg_backend_pid()::text") == backend)

        // The server forgets it behind postgres-nio's back: the read fails once, and the connection goes.
        _ = try storage.session.withLink { link in try link.execute("DEALLOCATE fatchat_feed") }
        #expect(throws: StoreError.self) { try db.fetchChanges(since: nil) }
        #expect(try onServer("SELECT pg_backend_pid()::text") != backend, "a new connection")
        #expect(try db.fetchChanges(since: nil, limit: 1).changes.map(\.recordID) == [saved.recordID])
        #expect(try onServer(prepared) == ["fatchat_feed"], "prepared again there")
    }

    @Test("Feed reads made from more tasks than Swift's pool has threads, each blocking its thread, all finish")
    func blockingReadsOnEveryPoolThreadFinish() async throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: .postgresql).publicDatabase
        let saved = try db.save(Record(recordType: "Note"))
        // Each task waits on its thread for postgres-nio; the prepared read runs on the event loop, not the pool.
        let readers = ProcessInfo.processInfo.activeProcessorCount * 2 + 2
        let seen = try await withThrowingTaskGroup(of: [RecordID].self) { group in
            for _ in 0..<readers {
                group.addTask { try db.fetchChanges(since: nil).changes.map(\.recordID) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(seen == Array(repeating: [saved.recordID], count: readers))
    }

    @Test("A URL with a password, or without a database, is refused before anything is written")
    func badURLsAreRefused() throws {
        let dir = try TemporaryDirectory()
        var options = Container.Options(privateDataDirectory: dir.path("private-data"))
        options.engine = .postgresql
        for url in ["postgresql://alice:secret@db.example/chat", "postgresql://db.example/", "mysql://db.example/chat"] {
            options.postgresURL = url
            let error = #expect(throws: StoreError.self) { try Container.create(at: dir.path("container"), access: .umask, options: options) }
            #expect(error?.code == .invalidArguments)
            #expect(!FileManager.default.fileExists(atPath: dir.path("container").path))
        }
        let socket = try PostgresEndpoint(url: "postgresql:///chat?host=/tmp/pg&port=5433", environment: [:])
        #expect(socket.address == .socket(path: "/tmp/pg/.s.PGSQL.5433"))
        let tcp = try PostgresEndpoint(url: "postgresql://bob@db.example:6543/chat", environment: [:])
        #expect(tcp.address == .tcp(host: "db.example", port: 6543))
        #expect(tcp.user == "bob")
        #expect(PostgresEndpoint.passFileFields(#"db\:x:5432:chat:bob:pa\\ss"#) == ["db:x", "5432", "chat", "bob", #"pa\ss"#])
    }
}
