import Foundation
import Testing
@testable import RecordStore

/// How fast a new client catches up from logs. A figure for the notes, never a pass/fail on time:
/// run it with `FATCHAT_LOG_CATCHUP=1000000 swift test --skip-build --filter LogCatchUpTests`.
struct LogCatchUpTests {
    static let count = Int(ProcessInfo.processInfo.environment["FATCHAT_LOG_CATCHUP"] ?? "") ?? 0

    @Test("A new client catches up with a long log: every message arrives, once", .enabled(if: count > 0))
    func catchUp() throws {
        let directory = try TemporaryDirectory()
        let writer = try openClient(directory, "writer")
        let account = writer.currentUser.recordID.recordName
        var channel = RecordStore.Record(recordType: "Channel", recordID: RecordID(recordName: "channel.big"))
        channel["topic"] = .string("big")
        try writer.publicDatabase.save(channel)
        guard let storage = writer.publicDatabase.storage as? LogStorage else {
            Issue.record("not a log container")
            return
        }
        // The messages go straight into the writer's log in the engine's format: this measures reading, not writing.
        var bytes: [UInt8] = []
        let reference = try FieldCoding.encode(["channel": .reference(Reference(recordID: channel.recordID, action: .deleteSelf))])
        let prefix = String(reference.dropLast())
        let began = ContinuousClock.now
        for index in 0..<Self.count {
            let fields = prefix + ",\"text\":{\"t\":\"s\",\"v\":\"message number \(index) with a few words in it\"}}"
            let entry = LogEntry(account: account, client: storage.slot.client, time: storage.clock.next(),
                                 recordID: RecordID(recordName: "m\(index)"),
                                 change: .save(LogEntry.Saved(recordType: "Message", fields: fields, created: 1_700_000_000 + Double(index),
                                                              modified: 1_700_000_000 + Double(index), changeTag: "t\(index)")))
            try LogFormat.encode(entry, into: &bytes)
            if bytes.count > 8 << 20 {
                try LogFixture.append(logURL(directory, account: account, client: storage.slot.client), bytes)
                bytes.removeAll(keepingCapacity: true)
            }
        }
        try LogFixture.append(logURL(directory, account: account, client: storage.slot.client), bytes)
        let written = ContinuousClock.now - began

        let reader = try openClient(directory, "reader")
        let start = ContinuousClock.now
        let applied = try reader.refreshPublicDatabase()
        let elapsed = ContinuousClock.now - start
        #expect(applied == Self.count + 1)
        #expect(try reader.publicDatabase.countRecords(matching: Query(recordType: "Message")) == Self.count)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(String(format: "figures: log catch-up: %d messages in %.1f s, %.0f messages/minute (log written in %@)",
                     Self.count, seconds, Double(Self.count) / seconds * 60, "\(written)"))
    }

    func openClient(_ directory: TemporaryDirectory, _ name: String) throws -> Container {
        var options = Container.Options(privateDataDirectory: directory.path(name))
        options.engine = .log
        return try Container(url: directory.path("container"), options: options)
    }

    func logURL(_ directory: TemporaryDirectory, account: String, client: UUID) -> URL {
        directory.path("container/logs/\(account)/\(LogDirectory.fileName(for: client))")
    }
}
