import Foundation
import GRDB
import Testing
@testable import RecordStore

/// The `log` engine behind RecordStore's API, with real files in a real container directory.
@Suite(.serialized)
struct LogEngineTests {
    /// Opens a client of the log container in `name`, with its own private data directory `client`.
    func open(_ directory: TemporaryDirectory, client: String, engine: StorageEngine? = .log) throws -> Container {
        var options = Container.Options(privateDataDirectory: directory.path(client))
        options.engine = engine
        return try Container(url: directory.path("container"), options: options)
    }

    func channel(_ name: String) -> RecordStore.Record {
        var record = RecordStore.Record(recordType: "Channel", recordID: RecordID(recordName: name))
        record["topic"] = .string("about \(name)")
        return record
    }

    func message(_ name: String, in channel: String) -> RecordStore.Record {
        var record = RecordStore.Record(recordType: "Message", recordID: RecordID(recordName: name))
        record["channel"] = .reference(Reference(recordID: RecordID(recordName: channel), action: .deleteSelf))
        record["text"] = .string("text of \(name)")
        return record
    }

    func names(_ database: RecordDatabase, type: String) throws -> [String] {
        try database.records(matching: Query(recordType: type)).records.map(\.recordID.recordName).sorted()
    }

    @Test("Subscriptions a migration left in the account's folder are taken once per version of the file; a damaged file or entry is skipped")
    func migratedSubscriptionsAreTakenOnce() throws {
        let directory = try TemporaryDirectory()
        let first = try open(directory, client: "a")
        let account = first.currentUser.recordID.recordName
        let file = directory.path("container/logs/\(account)/\(MigratedSubscription.fileName)")
        let good = Subscription(subscriptionID: "notes", recordType: "Note", options: .firesOnRecordCreation)
        let body = String(decoding: try JSONEncoder().encode(good), as: UTF8.self)

        // Not a list of subscriptions: nothing taken, nothing stopped.
        try Data("{not json".utf8).write(to: file)
        #expect(try first.refreshPublicDatabase() == 0)
        #expect(try first.publicDatabase.allSubscriptions().isEmpty)

        // A new version with one good entry and one whose body names another ID: the good one is taken by a new client.
        let entries = [MigratedSubscription(id: "notes", body: body), MigratedSubscription(id: "other", body: body)]
        try JSONEncoder().encode(entries).write(to: file)
        let second = try open(directory, client: "b")
        _ = try second.refreshPublicDatabase()
        #expect(try second.publicDatabase.allSubscriptions().map(\.subscriptionID) == ["notes"])

        // Deleted afterwards, it stays deleted in that cache, however often a client opens it again.
        try second.publicDatabase.deleteSubscription(withID: "notes")
        _ = try open(directory, client: "b").refreshPublicDatabase()
        #expect(try open(directory, client: "b").publicDatabase.allSubscriptions().isEmpty)
    }

    @Test("container.json records the log engine, a client asking for SQLite is refused, and logs/ is sticky and setgid")
    func descriptorRecordsTheEngine() throws {
        let directory = try TemporaryDirectory()
        let container = try open(directory, client: "a")
        #expect(container.engine == .log)
        let json = try String(contentsOf: directory.path("container/container.json"), encoding: .utf8)
        #expect(json.contains("\"engine\" : \"log\""))
        #expect(throws: StoreError.self) { try open(directory, client: "b", engine: .sqlite) }
        // A client that does not say which engine gets the one recorded.
        #expect(try open(directory, client: "c", engine: nil).engine == .log)
        let logs = try FileStatus(directory.path("container/logs").path)
        #expect(logs.permissions & S_ISVTX != 0)
        #expect(logs.permissions & S_ISGID != 0)
        let own = try FileStatus(directory.path("container/logs/\(container.currentUser.recordID.recordName)").path)
        #expect(own.owner == geteuid())
        #expect(own.permissions & 0o022 == 0, "only its owner may write a log directory")
    }

    @Test("Two clients see each other's saves after a poll; a deleted channel takes its messages with it on both")
    func twoClientsConverge() throws {
        let directory = try TemporaryDirectory()
        let first = try open(directory, client: "a"), second = try open(directory, client: "b")
        try first.publicDatabase.save(channel("channel.general"))
        try first.publicDatabase.save(message("m1", in: "channel.general"))
        #expect(try names(second.publicDatabase, type: "Message").isEmpty)
        #expect(try second.refreshPublicDatabase() == 2)
        #expect(try names(second.publicDatabase, type: "Message") == ["m1"])
        // The second client writes too, into its own log, and the first reads it.
        try second.publicDatabase.save(message("m2", in: "channel.general"))
        try first.refreshPublicDatabase()
        #expect(try names(first.publicDatabase, type: "Message") == ["m1", "m2"])
        // The stored copies are the same on both: same change tag, same fields.
        let one = try first.publicDatabase.record(for: RecordID(recordName: "m2"))
        let two = try second.publicDatabase.record(for: RecordID(recordName: "m2"))
        #expect(one.recordChangeTag == two.recordChangeTag)
        #expect(one.fields == two.fields)

        try first.publicDatabase.deleteRecord(withID: RecordID(recordName: "channel.general"))
        #expect(try names(first.publicDatabase, type: "Message").isEmpty)
        let token = try second.publicDatabase.fetchChanges(since: nil).token
        try second.refreshPublicDatabase()
        #expect(try names(second.publicDatabase, type: "Message").isEmpty)
        #expect(try names(second.publicDatabase, type: "Channel").isEmpty)
        let changes = try second.publicDatabase.fetchChanges(since: token)
        #expect(Set(changes.deletedRecords.map(\.recordID.recordName)) == ["channel.general", "m1", "m2"])
    }

    @Test("A torn tail a crash left in a client's own log is cut when it opens again, so later entries reach every reader")
    func tornOwnTailIsCut() throws {
        let directory = try TemporaryDirectory()
        let logs = try DirectoryHandle(path: directory.url.path, naming: ContainerNaming())
        let client = UUID(), account = "_0_root"
        let first = [try LogFixture.save("one", by: account, client: client, at: 10)]
        var appender: LogAppender? = try LogAppender(in: logs, client: client, account: account, mode: 0o644)
        try appender?.append(first)
        let goodEnd = appender?.end ?? 0
        appender = nil
        // Half of an entry, as a write cut short by SIGKILL or a full disk leaves it.
        var half: [UInt8] = []
        try LogFormat.encode(try LogFixture.save("ghost", by: account, client: client, at: 11), into: &half)
        let url = directory.path(LogDirectory.fileName(for: client))
        try LogFixture.append(url, Array(half.prefix(half.count / 2)))

        appender = try LogAppender(in: logs, client: client, account: account, mode: 0o644)
        #expect(appender?.end == goodEnd)
        #expect(appender?.latestTime == HybridTime(rawValue: 10))
        let second = [try LogFixture.save("two", by: account, client: client, at: 12)]
        try appender?.append(second)
        let scan = try #require(LogFixture.readBack(url.path), "the header no longer reads").scan
        #expect(scan.entries == first + second)
        #expect(scan.stop == LogFileReader.Stop.caughtUp)
        // Someone else's log under this client's name is refused, not appended to.
        #expect(throws: StoreError.self) { try LogAppender(in: logs, client: client, account: "_1_other", mode: 0o644) }
    }

    @Test("Whole entries after bytes that are not an entry are kept when the log opens again: it is written again without the damage, in a new generation")
    func wholeEntriesAfterDamageAreKept() throws {
        let directory = try TemporaryDirectory()
        let logs = try DirectoryHandle(path: directory.url.path, naming: ContainerNaming())
        let client = UUID(), account = "_0_root"
        let url = directory.path(LogDirectory.fileName(for: client))
        let first = [try LogFixture.save("one", by: account, client: client, at: 10)]
        var appender: LogAppender? = try LogAppender(in: logs, client: client, account: account, mode: 0o644)
        try appender?.append(first)
        #expect(appender?.header.generation == 0)
        appender = nil
        // Half an entry, then whole ones: what an earlier build left when it appended after a failed append.
        var half: [UInt8] = []
        try LogFormat.encode(try LogFixture.save("ghost", by: account, client: client, at: 11), into: &half)
        let after = [try LogFixture.save("two", by: account, client: client, at: 12), try LogFixture.delete("gone", by: account, client: client, at: 13)]
        var whole: [UInt8] = []
        for entry in after { try LogFormat.encode(entry, into: &whole) }
        try LogFixture.append(url, Array(half.prefix(half.count / 2)) + whole)

        appender = try LogAppender(in: logs, client: client, account: account, mode: 0o644)
        #expect(appender?.header.generation == 1, "the log was written again, so readers read it from its start")
        #expect(appender?.latestTime == HybridTime(rawValue: 13))
        let next = [try LogFixture.save("three", by: account, client: client, at: 14)]
        try appender?.append(next)
        let (header, scan) = try #require(LogFixture.readBack(url.path), "the header no longer reads")
        #expect(header.generation == 1)
        #expect(scan.entries == first + after + next)
        #expect(scan.stop == LogFileReader.Stop.caughtUp)
    }

    @Test("Entries that claim another account, or change someone else's record, are ignored and counted; a directory in someone else's name is not read")
    func hostileLogsAreIgnored() throws {
        let directory = try TemporaryDirectory()
        let owner = try open(directory, client: "a")
        let me = owner.currentUser.recordID.recordName
        try owner.publicDatabase.save(channel("channel.mine"))
        let logs = directory.path("container/logs")

        // Bob's directory and log, owned by bob as the filesystem reports it.
        let bob = "_4242_bob", bobClient = UUID()
        let bobDirectory = logs.appendingPathComponent(bob)
        try FileManager.default.createDirectory(at: bobDirectory, withIntermediateDirectories: false)
        var takeover = channel("channel.mine")
        takeover["topic"] = .string("bob was here")
        let bobEntries = [
            try LogFixture.save("channel.bobs", by: bob, client: bobClient, at: 1 << 40, type: "Channel", fields: ["topic": .string("bob's own")]),
            try LogFixture.save("channel.mine", by: bob, client: bobClient, at: 1 << 62, type: "Channel", fields: takeover.fields),
            LogFixture.delete("channel.mine", by: bob, client: bobClient, at: (1 << 62) + 1),
            try LogFixture.save("forged", by: me, client: bobClient, at: 1 << 41, type: "Channel"),
        ]
        let bobLog = bobDirectory.appendingPathComponent(LogDirectory.fileName(for: bobClient))
        try Data(try LogFixture.bytes(header: LogHeader(client: bobClient, account: bob, generation: 0), entries: bobEntries)).write(to: bobLog)
        chown(bobDirectory.path, 4242, 4242)
        chown(bobLog.path, 4242, 4242)

        // Carol's name on a directory root made: owners do not match, so none of it is read.
        let carol = "_4343_carol", carolClient = UUID()
        let carolDirectory = logs.appendingPathComponent(carol)
        try FileManager.default.createDirectory(at: carolDirectory, withIntermediateDirectories: false)
        try Data(try LogFixture.bytes(header: LogHeader(client: carolClient, account: carol, generation: 0), entries: [
            try LogFixture.save("channel.carols", by: carol, client: carolClient, at: 1 << 40, type: "Channel"),
        ])).write(to: carolDirectory.appendingPathComponent(LogDirectory.fileName(for: carolClient)))
        // And names that are no log at all.
        try Data("junk".utf8).write(to: logs.appendingPathComponent("README"))
        try FileManager.default.createSymbolicLink(atPath: logs.appendingPathComponent("_0_root2").path, withDestinationPath: "/etc")

        try owner.refreshPublicDatabase()
        #expect(try names(owner.publicDatabase, type: "Channel") == ["channel.bobs", "channel.mine"])
        let mine = try owner.publicDatabase.record(for: RecordID(recordName: "channel.mine"))
        #expect(mine["topic"]?.stringValue == "about channel.mine")
        #expect(mine.creatorUserRecordID?.recordName == me)
        #expect(try owner.publicDatabase.record(for: RecordID(recordName: "channel.bobs")).creatorUserRecordID?.recordName == bob)

        guard let storage = owner.publicDatabase.storage as? LogStorage else {
            Issue.record("not a log engine")
            return
        }
        let counts = try storage.cache.read { reader -> (foreign: Int, ignored: Int) in
            guard let access = reader as? SQLiteAccess else { return (-1, -1) }
            let foreign = try Int.fetchOne(access.db, sql: "SELECT foreign_entries FROM log_read WHERE log = ?",
                                           arguments: ["\(bob)/\(LogDirectory.fileName(for: bobClient))"]) ?? -1
            let ignored = try Int.fetchOne(access.db, sql: "SELECT count(*) FROM log_entry WHERE ignored = 1 AND account = ?", arguments: [bob]) ?? -1
            return (foreign, ignored)
        }
        #expect(counts.foreign == 1, "the entry in bob's log that claims to be mine")
        #expect(counts.ignored == 2, "bob's save and delete of my channel")
    }

    @Test("A log made without changing its folder's stat (as on sshfs: whole-second times, a fixed size) is found when the folder is listed again on the timer")
    func aLogTheFolderStatHidesIsFoundByTheTimer() throws {
        let directory = try TemporaryDirectory()
        let reader = try open(directory, client: "reader"), early = try open(directory, client: "early")
        guard let storage = reader.publicDatabase.storage as? LogStorage else {
            Issue.record("not a log engine")
            return
        }
        #expect(storage.relistAfter == LogStorage.relistInterval(on: Filesystem.detect(for: directory.url).kind))
        #expect(LogStorage.relistInterval(on: .sshfs) <= .seconds(1) && LogStorage.relistInterval(on: .smbnetfs) <= .seconds(1))
        try early.publicDatabase.save(channel("channel.early"))
        try reader.refreshPublicDatabase()
        #expect(try names(reader.publicDatabase, type: "Channel") == ["channel.early"])

        // A second log in the same folder, with the folder's times put back: its stat is what the reader listed.
        let folder = directory.path("container/logs/\(reader.currentUser.recordID.recordName)").path
        var before = stat()
        try #require(stat(folder, &before) == 0)
        try open(directory, client: "late").publicDatabase.save(channel("channel.late"))
        var times = [before.st_atim, before.st_mtim]
        try #require(utimensat(AT_FDCWD, folder, &times, 0) == 0)
        var after = stat()
        try #require(stat(folder, &after) == 0)
        try #require(FileStamp(after) == FileStamp(before), "the folder's size changed, so this filesystem cannot hide a new log")

        storage.relistAfter = .seconds(3600)
        try reader.refreshPublicDatabase()
        #expect(try names(reader.publicDatabase, type: "Channel") == ["channel.early"], "the folder's unchanged stat hid the new log")
        storage.relistAfter = .zero
        try reader.refreshPublicDatabase()
        #expect(try names(reader.publicDatabase, type: "Channel") == ["channel.early", "channel.late"])
    }
}
