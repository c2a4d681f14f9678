import Foundation
import Testing
@testable import RecordStore
@testable import SyncEngine

/// The sync engine on a `log` container: its change signal polls the logs, so another client's save arrives as an event.
@Suite struct LogSyncTests {
    func open(_ dir: TemporaryDirectory, user: String) throws -> Container {
        var options = Container.Options(privateDataDirectory: dir.path("private-\(user)"))
        options.engine = .log
        return try Container(url: dir.path("container"), options: options)
    }

    @Test func anotherClientsSaveAndDeleteArriveThroughThePoll() throws {
        let dir = try TemporaryDirectory()
        var configuration = SyncEngine.Configuration.testing()
        configuration.pollInterval = nil
        let engine = try SyncEngine(container: try open(dir, user: "reader"), configuration: configuration)
        #expect(engine.pollInterval == 0.25)
        // Quick looks at the bell are for where others' bells go unheard: a network filesystem, not a local disk.
        #expect(engine.quickLookInterval == nil)
        var remote = Container.Options(privateDataDirectory: dir.path("private-remote"))
        (remote.engine, remote.mode) = (.log, .network)
        let elsewhere = try Container(url: dir.path("network-container"), options: remote)
        #expect(try SyncEngine(container: elsewhere, configuration: configuration).quickLookInterval == 0.015)
        var fixed = configuration
        fixed.quickLookInterval = 0.05
        #expect(try SyncEngine(container: try open(dir, user: "fixed"), configuration: fixed).quickLookInterval == 0.05)
        engine.start()
        defer { engine.stop() }
        var collector = EventCollector(engine: engine)
        _ = collector.collect(timeout: 0.3) { _ in false }

        let arrived = try saveAndDeleteArrive("from-the-log", from: try open(dir, user: "writer"), at: &collector)
        #expect(arrived.saved)
        #expect(arrived.deleted)
    }

    @Test("A commit made on this machine rings logs/ and arrives at once, not at the poll; a quiet one waits for the next")
    func aCommitOnThisMachineRingsTheBell() throws {
        let dir = try TemporaryDirectory()
        var configuration = SyncEngine.Configuration.testing()
        configuration.pollInterval = 60
        let reader = try open(dir, user: "reader")
        #expect(reader.bellDirectory.lastPathComponent == "logs")
        let engine = try SyncEngine(container: reader, configuration: configuration)
        engine.start()
        defer { engine.stop() }
        var collector = EventCollector(engine: engine)
        _ = collector.collect(timeout: 0.3) { _ in false }
        let writer = try open(dir, user: "writer")

        // With a minute between polls, only the bell brings these within seconds.
        let arrived = try saveAndDeleteArrive("rung", from: writer, at: &collector)
        #expect(arrived.saved)
        #expect(arrived.deleted)

        try QuietCommits.quietly { _ = try writer.publicDatabase.save(Record(recordType: "Note", recordID: RecordID(recordName: "quiet"))) }
        #expect(!collector.collect(timeout: 1.5) { changedNames($0).contains("quiet") }, "a quiet commit rang nothing")
        _ = try writer.publicDatabase.save(Record(recordType: "Note", recordID: RecordID(recordName: "loud")))
        // Within 2.5 s: the watchers' trust in bells lapses about 3.5 s after the loud save, and that look would bring both too.
        #expect(collector.collect(timeout: 2.5) { Set(changedNames($0)).isSuperset(of: ["quiet", "loud"]) }, "the next bell brought both")
    }

    @Test("Where the bell is not heard, a reader looks at logs/ between polls once a poll found a commit that rang it: a loud commit arrives at the next look, a quiet one at the poll")
    func aReaderThatCannotHearTheBellLooksAtIt() throws {
        let dir = try TemporaryDirectory()
        let writer = try open(dir, user: "writer")
        func save(_ name: String) throws {
            _ = try writer.publicDatabase.save(Record(recordType: "Note", recordID: RecordID(recordName: name)))
        }
        // The writer's log exists before the reader starts, so that what follows rings only when it is loud.
        try save("before")
        // No inotify, as on another mount or machine, and 4 s between polls. A due save of the position
        // wakes the loop for a look of its own, so none is due while the test runs.
        var configuration = SyncEngine.Configuration.testing(client: "looking")
        configuration.useInotify = false
        configuration.pollInterval = 4
        configuration.tokenSaveDelay = 60
        configuration.quickLookInterval = 0.02
        let engine = try SyncEngine(container: try open(dir, user: "reader"), configuration: configuration)
        engine.start()
        defer { engine.stop() }
        var collector = EventCollector(engine: engine)
        _ = collector.collect(timeout: 0.3) { _ in false }

        // A quiet commit (everyone's heartbeats) is found by the poll, and sets no quick looks going:
        // the loud one after it waits for the next poll, about 4 s on.
        try QuietCommits.quietly { try save("quiet-first") }
        #expect(collector.collect(timeout: 10) { changedNames($0).contains("quiet-first") })
        try save("polled")
        #expect(!collector.collect(timeout: 2) { changedNames($0).contains("polled") }, "a quiet commit set no looks going")
        // The poll finds it; a commit that rang, found on the timer, sets the looks going.
        #expect(collector.collect(timeout: 6) { changedNames($0).contains("polled") })
        // Each of these within 0.8 s: by the poll alone, all three would with a chance of 1 in 125.
        for name in ["looked-at-1", "looked-at-2", "looked-at-3"] {
            try save(name)
            #expect(collector.collect(timeout: 0.8) { changedNames($0).contains(name) }, "\(name) came at a look")
        }

        // The last look read the logs, so the next poll is 4 s away at least.
        try QuietCommits.quietly { try save("quiet") }
        #expect(!collector.collect(timeout: 1.5) { changedNames($0).contains("quiet") }, "a quiet commit moved nothing a look sees")
        try save("loud")
        #expect(collector.collect(timeout: 2) { Set(changedNames($0)).isSuperset(of: ["quiet", "loud"]) }, "the next loud commit's look brought both")
    }
}
