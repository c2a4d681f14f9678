import Foundation
@testable import RecordStore
@testable import SyncEngine

/// A temporary directory that removes itself when the test is done with it.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("fatchat-sync-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ component: String) -> URL { url.appendingPathComponent(component) }

    /// Opens the shared container; each `user` label gets its own private data, as separate OS users would.
    func container(user: String = "me", mode: JournalMode? = nil) throws -> Container {
        try Container(url: path("container"), options: Container.Options(mode: mode, privateDataDirectory: path("private-\(user)")))
    }
}

extension SyncEngine.Configuration {
    /// Fast settings for tests: short polls and backoff.
    static func testing(client: String = "test") -> SyncEngine.Configuration {
        var configuration = SyncEngine.Configuration()
        configuration.clientName = client
        configuration.pollInterval = 0.2
        configuration.maximumBackoff = 0.2
        return configuration
    }

    /// An engine that fetches and sends only when the test calls `fetchOnce()` or `sendOnce()`.
    static func stepped(client: String = "test") -> SyncEngine.Configuration {
        var configuration = testing(client: client)
        configuration.automaticallySync = false
        return configuration
    }
}

/// Collects events from an engine's descriptor, the way a poll() loop would.
struct EventCollector {
    let engine: SyncEngine
    var received: [SyncEvent] = []

    /// Polls the descriptor until `done` holds for what arrived, or `timeout` passes.
    mutating func collect(timeout: Double, until done: ([SyncEvent]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !done(received) {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return false }
            var fds = [pollfd(fd: engine.eventDescriptor, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 1, Int32(remaining * 1000) + 1)
            drain()
        }
        return true
    }

    /// Takes whatever is waiting, without waiting: what a pass the test stepped has emitted.
    mutating func drain() {
        while let event = engine.nextEvent() { received.append(event) }
    }
}

/// Saves a note in `writer`'s public database, then deletes it; returns whether the engine reported each.
func saveAndDeleteArrive(_ name: String, from writer: Container, at collector: inout EventCollector) throws -> (saved: Bool, deleted: Bool) {
    var note = Record(recordType: "Note", recordID: RecordID(recordName: name))
    note["text"] = "hi"
    try writer.publicDatabase.save(note)
    let saved = collector.collect(timeout: 10) { changedNames($0).contains(name) }
    try writer.publicDatabase.deleteRecord(withID: note.recordID)
    return (saved, collector.collect(timeout: 10) { deletedNames($0).contains(name) })
}

/// The names of records in `recordsChanged` events.
func changedNames(_ events: [SyncEvent]) -> [String] {
    events.flatMap { event -> [String] in
        if case .recordsChanged(let records) = event { return records.map(\.recordID.recordName) }
        return []
    }
}

/// The names of records in `recordsDeleted` events.
func deletedNames(_ events: [SyncEvent]) -> [String] {
    events.flatMap { event -> [String] in
        if case .recordsDeleted(let records) = event { return records.map(\.recordID.recordName) }
        return []
    }
}
