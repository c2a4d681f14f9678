import Foundation
import Synchronization
import GRDB
import Testing
@testable import RecordStore

/// What opening and making a container does with entries another member may have removed, replaced or planted.
@Suite struct ContainerFilesTests {
    /// Options as Fatchat passes them, naming its `init` command in the errors these tests read.
    private func options(_ dir: TemporaryDirectory, create: Bool = true, mode: JournalMode? = nil) -> Container.Options {
        Container.Options(mode: mode, create: create, privateDataDirectory: dir.path("private-data"), naming: ContainerNamingTests.fatchat)
    }

    private func mark(_ path: String) throws -> Int32 {
        try DatabaseQueue(path: path).read { try Int32.fetchOne($0, sql: "PRAGMA application_id") ?? 0 }
    }

    // MARK: The descriptor

    @Test func aVanishedDescriptorIsAnErrorAndNoNewIdentityIsMade() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        try container.publicDatabase.save(Record(recordType: "Note"))
        let descriptor = container.url.appendingPathComponent("container.json")
        try FileManager.default.removeItem(at: descriptor)

        for create in [true, false] {
            let error = #expect(throws: StoreError.self) { try Container(url: container.url, options: options(dir, create: create)) }
            #expect(error?.code == .badContainer)
            #expect(error?.message.contains("container.json has gone") == true, "\(error?.message ?? "")")
        }
        #expect(!FileManager.default.fileExists(atPath: descriptor.path))
    }

    /// Another process making the container holds the directory's lock, and makes the database
    /// before the descriptor: an open that lands between the two waits for the lock, instead of
    /// calling the descriptor gone (seen with eight writers racing to create one container).
    /// GRDB checks the `-wal` file by name while it opens a pool: a container moved away at that moment
    /// throws Foundation's "no such file", which must read as the container being away (transient), not as a fault.
    @Test func aWALFileGoneWhileOpeningIsTheContainerBeingAway() throws {
        for code in [CocoaError.Code.fileReadNoSuchFile, .fileNoSuchFile] {
            let error = StoreError.translating(CocoaError(code, userInfo: [NSFilePathErrorKey: "/c/public.sqlite-wal"]), path: "/c/public.sqlite")
            #expect((error as? StoreError)?.code == .serviceUnavailable, "\(error)")
            #expect((error as? StoreError)?.isTransient == true)
        }
        let other = StoreError.translating(CocoaError(.fileWriteOutOfSpace), path: "/c/public.sqlite")
        #expect(!(other is StoreError), "other Foundation errors pass through: \(other)")
    }

    @Test func anOpenDuringAnotherProcesssCreateWaitsForItInsteadOfCallingTheDescriptorGone() async throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let descriptor = container.url.appendingPathComponent("container.json")
        let aside = dir.path("container.json.aside")
        try FileManager.default.moveItem(at: descriptor, to: aside)
        // The creator's lock: flock on another open of the directory, as DirectoryHandle takes it.
        let fd = open(container.url.path, O_RDONLY | O_DIRECTORY)
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)

        let url = container.url, opening = options(dir, create: false)
        let opener = Task.detached { try Container(url: url, options: opening).identifier }
        try await Task.sleep(for: .milliseconds(500))
        // The creator finishes: the descriptor appears, then the lock goes.
        try FileManager.default.moveItem(at: aside, to: descriptor)
        #expect(flock(fd, LOCK_UN) == 0)
        let identifier = try await opener.value
        #expect(identifier == container.identifier)
    }

    @Test func onlyAnExplicitCreateMakesAContainer() throws {
        let dir = try TemporaryDirectory()
        let empty = dir.path("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let notOne = #expect(throws: StoreError.self) { try Container(url: empty, options: options(dir, create: false)) }
        #expect(notOne?.code == .badContainer)
        #expect(notOne?.message.contains("fatchat init") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty.path).isEmpty)

        let missing = #expect(throws: StoreError.self) { try Container(url: dir.path("missing"), options: options(dir, create: false)) }
        #expect(missing?.message.contains("fatchat init") == true)
        #expect(!FileManager.default.fileExists(atPath: dir.path("missing").path))
    }

    @Test func createRefusesADirectoryHoldingAnyContainerEntry() throws {
        let dir = try TemporaryDirectory()
        for entry in ["container.json", "public.sqlite", "public.sqlite-wal", "assets"] {
            let url = dir.path("with-\(entry)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try Data("left alone".utf8).write(to: url.appendingPathComponent(entry))
            let error = #expect(throws: StoreError.self) { try Container.create(at: url, access: .umask, options: options(dir)) }
            #expect(error?.code == .badContainer, "\(entry)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: url.path) == [entry], "\(entry): nothing was added")
            #expect(try String(contentsOf: url.appendingPathComponent(entry), encoding: .utf8) == "left alone")
        }
    }

    @Test func createChangesNoModeOfADirectoryItDidNotMake() throws {
        let dir = try TemporaryDirectory()
        let url = dir.path("existing")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        chmod(url.path, 0o755)
        let error = #expect(throws: StoreError.self) { try Container.create(at: url, access: .owner(), options: options(dir)) }
        #expect(error?.message.contains("chmod 700") == true, "\(error?.message ?? "")")
        #expect(try FileStatusOf(url.path).mode == 0o755)
        chmod(url.path, 0o700)
        let made = try Container.create(at: url, access: .owner(), options: options(dir))
        #expect(try FileStatusOf(made.url.appendingPathComponent("public.sqlite").path).mode == 0o600)
    }

    @Test func aGroupContainerIsTheGroupsAloneAndItsAssetsAreReadOnly() throws {
        let dir = try TemporaryDirectory()
        let url = dir.path("group")
        let container = try Container.create(at: url, access: .group(getgid()), options: options(dir))
        let source = dir.path("secret.txt")
        try Data("only mine".utf8).write(to: source)
        chmod(source.path, 0o600)
        var record = Record(recordType: "Attachment")
        record["file"] = .asset(Asset(fileURL: source))
        let saved = try container.publicDatabase.save(record)
        let hash = try #require(saved["file"]?.assetValue?.contentHash)

        #expect(try FileStatusOf(url.path).mode == 0o2770)
        #expect(try FileStatusOf(url.appendingPathComponent("assets").path).mode == 0o2770)
        #expect(try FileStatusOf(url.appendingPathComponent("public.sqlite").path).mode == 0o660)
        #expect(try FileStatusOf(url.appendingPathComponent("public.sqlite-wal").path).mode == 0o660)
        #expect(try FileStatusOf(url.appendingPathComponent("container.json").path).mode == 0o640)
        #expect(try FileStatusOf(url.appendingPathComponent("assets/\(hash)").path).mode == 0o640)

        // A private asset gains nothing: it stays the owner's alone.
        let note = try container.privateDatabase.save(record)
        let privateHash = try #require(note["file"]?.assetValue?.contentHash)
        let privateAssets = dir.path("private-data/\(container.identifier)/assets")
        #expect(try FileStatusOf(privateAssets.appendingPathComponent(privateHash).path).mode == 0o600)

        let readable = try Container.create(at: dir.path("public"), access: .group(getgid(), readableByOthers: true), options: options(dir))
        let shared = try readable.publicDatabase.save(record)
        #expect(try FileStatusOf(readable.url.path).mode == 0o2775)
        #expect(try FileStatusOf(readable.url.appendingPathComponent("public.sqlite").path).mode == 0o664)
        let sharedHash = try #require(shared["file"]?.assetValue?.contentHash)
        #expect(try FileStatusOf(readable.url.appendingPathComponent("assets/\(sharedHash)").path).mode == 0o644)
    }

    // MARK: Symlinks

    @Test func aSymlinkedPublicDatabaseIsRefusedAndItsTargetUntouched() throws {
        let dir = try TemporaryDirectory()
        let victim = try dir.container("victim")
        try victim.publicDatabase.save(Record(recordType: "Note"))
        let target = victim.url.appendingPathComponent("public.sqlite").path
        let container = try dir.container("shared")
        let path = container.url.appendingPathComponent("public.sqlite").path
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        let before = try Data(contentsOf: URL(fileURLWithPath: target))

        let error = #expect(throws: StoreError.self) { try dir.container("shared") }
        #expect(error?.code == .badContainer)
        #expect(error?.message.contains("symbolic link") == true)
        // An open one notices the swap at its next transaction, and refuses too.
        let late = #expect(throws: StoreError.self) { try container.publicDatabase.save(Record(recordType: "Note")) }
        #expect(late?.code == .badContainer)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == before)
    }

    @Test(arguments: ["assets", "container.json", "public.sqlite-wal", "public.sqlite-journal"])
    func aSymlinkedEntryIsRefused(entry: String) throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let elsewhere = dir.path("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let precious = elsewhere.appendingPathComponent("precious")
        try Data("precious".utf8).write(to: precious)
        let path = container.url.appendingPathComponent(entry)
        try? FileManager.default.removeItem(at: path)
        try FileManager.default.createSymbolicLink(at: path, withDestinationURL: entry == "assets" ? elsewhere : precious)

        let error = #expect(throws: StoreError.self) { try dir.container() }
        #expect(error?.code == .badContainer, "\(error.map { "\($0)" } ?? "")")
        #expect(error?.message.contains("symbolic link") == true || error?.message.contains("not the assets directory") == true)
        #expect(try String(contentsOf: precious, encoding: .utf8) == "precious")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path) == ["precious"])
    }

    // MARK: application_id

    @Test func newDatabasesAreMarkedAsFatchats() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        #expect(try mark(container.url.appendingPathComponent("public.sqlite").path) == DatabaseFile.applicationID)
        #expect(try mark(dir.path("private-data/\(container.identifier)/private.sqlite").path) == DatabaseFile.applicationID)
        #expect(DatabaseFile.applicationID == 0x4643_4854, "FCHT")
    }

    @Test(arguments: [JournalMode.local, .network])
    func anEmptiedDatabaseIsAnErrorAndStaysEmpty(mode: JournalMode) throws {
        let dir = try TemporaryDirectory()
        _ = try dir.container(mode: mode)
        let path = dir.path("container/public.sqlite").path
        try? FileManager.default.removeItem(atPath: path + "-wal")
        try? FileManager.default.removeItem(atPath: path + "-shm")
        guard truncate(path, 0) == 0 else { throw StoreError(.internalError, "truncate failed") }
        let error = #expect(throws: StoreError.self) { try dir.container(mode: mode) }
        #expect(error?.code == .badDatabase)
        #expect(error?.message.contains("empty") == true)
        #expect(try FileStatusOf(path).size == 0)
    }

    @Test func withBothFilesUnusableTheOpeningNamesThePrivateOneAsWhenTheyOpenedInTurn() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        // The private and the public file are opened at once; the private one's failure still comes first.
        let privateDirectory = dir.path("private-data/\(container.identifier)")
        try FileManager.default.removeItem(at: privateDirectory)
        try Data("not a directory".utf8).write(to: privateDirectory)
        let path = dir.path("container/public.sqlite").path
        guard truncate(path, 0) == 0 else { throw StoreError(.internalError, "truncate failed") }
        let both = #expect(throws: StoreError.self) { try dir.container() }
        #expect(both?.code == .permissionFailure)
        #expect(both?.message.contains(privateDirectory.path) == true)

        // With the private directory back, the public file's own error is the one left.
        try FileManager.default.removeItem(at: privateDirectory)
        let publicOnly = #expect(throws: StoreError.self) { try dir.container() }
        #expect(publicOnly?.code == .badDatabase)
    }

    @Test func twoPiecesOfWorkAtOnceEachReturnTheirOwnAndBothRunWhenTheFirstThrows() throws {
        let (number, text) = try OnAllCores.both({ (1...1000).reduce(0, +) }, { String(repeating: "b", count: 3) })
        #expect(number == 500_500)
        #expect(text == "bbb")

        let secondRan = Mutex(false)
        let first = #expect(throws: StoreError.self) {
            _ = try OnAllCores.both({ throw StoreError(.unknownItem, "first") },
                                    { () throws -> Int in secondRan.withLock { $0 = true }; throw StoreError(.badDatabase, "second") })
        }
        #expect(first?.message == "first")
        #expect(secondRan.withLock { $0 })
        let second = #expect(throws: StoreError.self) {
            _ = try OnAllCores.both({ 1 }, { () throws -> Int in throw StoreError(.badDatabase, "second") })
        }
        #expect(second?.message == "second")
    }

    @Test(arguments: [0, 1, 15, 16, 400])
    func outputsMadeAheadComeInOrderAndABatchIsMadeOnAnotherThreadToo(count: Int) {
        let caller = pthread_self()
        let elsewhere = Mutex(0)
        let spread = count == 400 && OnAllCores.cores > 1
        let ahead = OnAllCores.ahead(Array(0..<count)) { item in
            if pthread_equal(pthread_self(), caller) == 0 {
                elsewhere.withLock { $0 += 1 }
            } else if spread {
                // The caller never waits for a worker that has not started, and would make all 400 itself
                // while other tests keep Dispatch's threads busy: here it waits, up to 10 s, for a worker's first.
                let deadline = Date().addingTimeInterval(10)
                while elsewhere.withLock({ $0 }) == 0, Date() < deadline { usleep(1_000) }
            }
            usleep(100)
            return item * item
        }
        // Asked out of order: the last first, then the rest.
        if count > 0 { #expect(ahead.output(count - 1) == (count - 1) * (count - 1)) }
        #expect((0..<count).map { ahead.output($0) } == (0..<count).map { $0 * $0 })
        // A few are made on the caller's thread before it goes on; a batch also on the other cores.
        if count < 16 || OnAllCores.cores == 1 { #expect(elsewhere.withLock { $0 } == 0) }
        if count == 400, OnAllCores.cores > 1 { #expect(elsewhere.withLock { $0 } > 0) }
    }

    @Test func anOutputAskedForAfterTheWorkersStoppedIsMadeByTheCaller() {
        let ahead = OnAllCores.ahead(Array(0..<400)) { item in
            usleep(200)
            return item + 1
        }
        ahead.stop()
        #expect(ahead.output(399) == 400)
        #expect(ahead.output(0) == 1)
    }

    /// A helper busy elsewhere leaves every part to the caller; the job it was handed must not keep the work,
    /// and what the work holds (a container and its open files), alive until it gets to it.
    @Test(.enabled(if: OnAllCores.cores > 1))
    func workTheCallerFinishedIsNotKeptAliveByABusyHelper() {
        final class Held: Sendable {}
        let release = DispatchSemaphore(value: 0)
        OnAllCores.helpers[0].run { release.wait() }
        defer { release.signal() }
        weak var held: Held?
        do {
            let piece = Held()
            held = piece
            OnAllCores.perform(2) { _ in withExtendedLifetime(piece) {} }
        }
        #expect(held == nil)
    }

    @Test(arguments: [JournalMode.local, .network])
    func aForeignRollbackFileStaysByteForByte(mode: JournalMode) throws {
        let dir = try TemporaryDirectory()
        _ = try dir.container(mode: mode)
        let path = dir.path("container/public.sqlite").path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        // Even with our table names: no mark, so another program's file.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "PRAGMA application_id = 42")
            try db.execute(sql: "CREATE TABLE fatchat_meta (key TEXT PRIMARY KEY, value TEXT)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(before[18] == 1 && before[19] == 1, "rollback journal")

        let error = #expect(throws: StoreError.self) { try dir.container(mode: mode) }
        #expect(error?.code == .badDatabase)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test(arguments: [JournalMode.local, .network])
    func aFileFromBeforeTheMarkOpensAndIsMarkedOnce(mode: JournalMode) throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(mode: mode)
        let saved = try container.publicDatabase.save(Record(recordType: "Note"))
        let path = container.url.appendingPathComponent("public.sqlite").path
        try DatabaseQueue(path: path).writeWithoutTransaction { try $0.execute(sql: "PRAGMA application_id = 0") }
        #expect(try mark(path) == 0)

        let reopened = try dir.container(mode: mode)
        #expect(try mark(path) == DatabaseFile.applicationID)
        #expect(try reopened.publicDatabase.record(for: saved.recordID).recordType == "Note")
        _ = try dir.container(mode: mode)
        #expect(try mark(path) == DatabaseFile.applicationID)
    }

    // MARK: Asset names

    /// Writes a field naming `name` as an asset straight into the record table, as another member could.
    private func plant(_ name: String, in record: RecordID, path: String) throws {
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE record SET fields = json_set(fields, '$.file', json_object('t', 'a', 'v', ?, 'x', 5)) WHERE name = ?",
                           arguments: [name, record.recordName])
            try db.execute(sql: "INSERT INTO asset_use (hash, record) SELECT ?, id FROM record WHERE name = ?", arguments: [name, record.recordName])
        }
    }

    @Test func aPlantedAssetPathIsNeverUsed() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let db = container.publicDatabase
        let precious = dir.path("precious.txt")
        try Data("precious".utf8).write(to: precious)
        let saved = try db.save(Record(recordType: "Attachment"))
        let traversal = String(repeating: "../", count: 8) + String(precious.path.dropFirst())
        try plant(traversal, in: saved.recordID, path: container.url.appendingPathComponent("public.sqlite").path)

        let read = #expect(throws: StoreError.self) { try db.record(for: saved.recordID) }
        #expect(read?.code == .badDatabase)
        #expect(try db.checkIntegrity().contains { $0.contains("not a SHA-256") })
        _ = try? db.deleteRecord(withID: saved.recordID)
        try db.eraseAll()
        #expect(try String(contentsOf: precious, encoding: .utf8) == "precious")
    }

    @Test func erasingEverythingGoesInBatchesAndReportsHowFarItIs() throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container().publicDatabase
        try db.setIndexes(.searchable, forField: "text", ofType: "Note")
        for batch in 0..<26 {
            let notes = (0..<400).map { index in
                var note = Record(recordType: "Note")
                note["text"] = .string("note \(batch * 400 + index)")
                return note
            }
            _ = try db.modifyRecords(saving: notes, deleting: [])
        }
        let query = Query(recordType: "Note")
        #expect(try db.countRecords(matching: query) == 10_400)

        var reports: [ErasureProgress] = []
        try db.eraseAll { reports.append($0) }
        let total = try #require(reports.first).total
        // Records, their search text and their changes: at least 10,400 rows of each, over 10,000 a batch.
        #expect(total >= 3 * 10_400, "\(reports)")
        #expect(reports.first?.done == 0 && reports.last?.done == total, "\(reports)")
        #expect(reports.allSatisfy { $0.total == total }, "\(reports)")
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.done <= $1.done }, "\(reports)")
        #expect(reports.filter { $0.done > 0 && $0.done < total }.count >= 4, "a report after each batch: \(reports)")
        #expect(reports.last?.fraction == 1)
        #expect(try db.countRecords(matching: query) == 0)
        #expect(try db.records(matching: Query(recordType: "Note", predicate: try QueryPredicate(format: "self CONTAINS %@", "note"))).records.isEmpty)
        // The change history went too, so every earlier token has expired.
        #expect(#expect(throws: StoreError.self) { try db.fetchChanges(since: nil) }?.code == .changeTokenExpired)
    }

    @Test func aStoredAssetIsNeverReachedThroughASymlinkAndIsCheckedOnTheWayOut() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let db = container.publicDatabase
        let source = dir.path("source.txt")
        try Data("the real content".utf8).write(to: source)
        var record = Record(recordType: "Attachment")
        record["file"] = .asset(Asset(fileURL: source))
        let asset = try #require(try db.save(record)["file"]?.assetValue)
        let hash = try #require(asset.contentHash)
        let stored = container.url.appendingPathComponent("assets/\(hash)")

        try db.copyAsset(asset, to: dir.path("copy.txt"))
        #expect(try String(contentsOf: dir.path("copy.txt"), encoding: .utf8) == "the real content")
        #expect(#expect(throws: StoreError.self) { try db.copyAsset(asset, to: dir.path("copy.txt")) }?.message.contains("exists already") == true)

        let secret = dir.path("secret.txt")
        try Data("secret".utf8).write(to: secret)
        try FileManager.default.removeItem(at: stored)
        try FileManager.default.createSymbolicLink(at: stored, withDestinationURL: secret)
        #expect(throws: StoreError.self) { try db.copyAsset(asset, to: dir.path("through-link.txt")) }
        #expect(!FileManager.default.fileExists(atPath: dir.path("through-link.txt").path))

        try FileManager.default.removeItem(at: stored)
        try Data("swapped in by someone".utf8).write(to: stored)
        let swapped = #expect(throws: StoreError.self) { try db.copyAsset(asset, to: dir.path("swapped.txt")) }
        #expect(swapped?.code == .badDatabase)
        #expect(!FileManager.default.fileExists(atPath: dir.path("swapped.txt").path))
    }

    @Test(arguments: ["fifo", "device", "directory"])
    func onlyARegularFileIsStored(kind: String) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container().publicDatabase
        let source = dir.path("source")
        switch kind {
        case "fifo": #expect(mkfifo(source.path, 0o600) == 0)
        case "device": try FileManager.default.createSymbolicLink(atPath: source.path, withDestinationPath: "/dev/zero")
        default: try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        }
        var record = Record(recordType: "Attachment")
        record["file"] = .asset(Asset(fileURL: source))
        let error = #expect(throws: StoreError.self) { try db.save(record) }
        #expect(error?.code == .invalidArguments)
        #expect(error?.message.contains("not a regular file") == true)
        #expect(throws: StoreError.self) { try Asset.checkSource(source) }
    }
}

/// The mode and size of a path, not following a symlink.
struct FileStatusOf {
    var mode: mode_t
    var size: Int64

    init(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw StoreError(.internalError, "lstat \(path): \(String(cString: strerror(errno)))") }
        mode = info.st_mode & 0o7777
        size = Int64(info.st_size)
    }
}
