import Foundation
import Testing
@testable import RecordStore
@testable import SyncEngine

/// How the outbox keeps a record until it is sent: every kind of field comes out as it went in,
/// and what an older build queued in its own form is still sent after an upgrade.
@Suite struct OutboxFormatTests {
    @Test func everyKindOfFieldComesOutOfTheOutboxAsItWentIn() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        try container.publicDatabase.save(Record(recordType: "Channel", recordID: RecordID(recordName: "general")))
        let engine = try SyncEngine(container: container, configuration: .stepped())
        let file = dir.path("picture.png")
        try Data("not really a picture".utf8).write(to: file)

        var message = Record(recordType: "Message", recordID: RecordID(recordName: "everything"))
        message["text"] = "a \"quoted\" line\nand f_text, refKeys"
        message["count"] = .int64(9_007_199_254_740_993)
        message["ratio"] = .double(0.1)
        message["raw"] = .bytes(Data([0, 255, 10]))
        message["chunks"] = .list([.bytes(Data([1])), .bytes(Data([2, 3]))])
        message["at"] = .date(Date(timeIntervalSince1970: 1_700_000_000))
        message["where"] = .location(Location(latitude: 52.5, longitude: 13.4, altitude: 34))
        message["channel"] = .reference(Reference(recordID: RecordID(recordName: "general"), action: .deleteSelf))
        message["seen"] = .list([.reference(Reference(recordID: RecordID(recordName: "general")))])
        message["tags"] = .list(["none:general", "x"])
        message["attachment"] = .asset(Asset(fileURL: file))
        try engine.send(saving: [message])
        // The outbox holds its own copy of the file: the app's may be gone by the time it is sent.
        try FileManager.default.removeItem(at: file)

        let queued = try #require(try engine.outboxEntry(for: message.recordID)?.record)
        for key in message.allKeys where key != "attachment" {
            #expect(queued[key] == message[key], "\(key)")
        }
        #expect(queued.recordType == "Message")

        try engine.sendOnce()
        let sent = try container.publicDatabase.record(for: message.recordID)
        for key in ["text", "count", "ratio", "raw", "chunks", "at", "where", "channel", "seen", "tags"] {
            #expect(sent[key] == message[key], "\(key)")
        }
        let asset = try #require(sent["attachment"]?.assetValue)
        #expect(try Data(contentsOf: asset.fileURL) == Data("not really a picture".utf8))
    }

    @Test func bytesThatTheSharedFileTakesFitInTheOutboxToo() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let engine = try SyncEngine(container: container, configuration: .stepped())
        // Four fifths of the limit: as base64 text it would be past it.
        var large = Record(recordType: "Blob", recordID: RecordID(recordName: "large"))
        large["data"] = .bytes(Data(repeating: 7, count: Record.maximumSize * 4 / 5))
        try engine.send(saving: [large])
        try engine.sendOnce()
        #expect(try container.publicDatabase.record(for: large.recordID)["data"] == large["data"])
    }

    @Test func aListThatMixesTypesIsRefusedWhenQueuedAsBefore() throws {
        let dir = try TemporaryDirectory()
        let engine = try SyncEngine(container: try dir.container(), configuration: .stepped())
        var mixed = Record(recordType: "Message", recordID: RecordID(recordName: "mixed"))
        mixed["items"] = .list(["one", .int64(2)])
        #expect(throws: StoreError.self) { try engine.send(saving: [mixed]) }
        #expect(try engine.outboxEntries().isEmpty)
    }

    @Test func aFieldKeyTheStoreWouldRefuseIsRefusedWhenQueued() throws {
        let dir = try TemporaryDirectory()
        let engine = try SyncEngine(container: try dir.container(), configuration: .stepped())
        var bad = Record(recordType: "Message", recordID: RecordID(recordName: "bad-key"))
        bad["text-with-dash"] = "hi"
        let error = #expect(throws: StoreError.self) { try engine.send(saving: [bad]) }
        #expect(error?.code == .invalidArguments)
        #expect(try engine.outboxEntries().isEmpty, "nothing is queued that could only fail at send")
    }

    @Test func aSaveAnOlderBuildQueuedIsSentAfterTheUpgrade() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        try container.publicDatabase.save(Record(recordType: "Channel", recordID: RecordID(recordName: "general")))
        let engine = try SyncEngine(container: container, configuration: .stepped())

        // As the builds before the one-text form wrote it: fields under f_, references as "action:name" strings.
        var item = Record(recordType: Outbox.itemType, recordID: RecordID(recordName: "old-message", zoneID: Outbox.zone))
        item["op"] = "save"
        item["type"] = "Message"
        item["state"] = "pending"
        item["order"] = .int64(1)
        item["f_text"] = "queued before the upgrade"
        item["f_channel"] = "deleteSelf:general"
        item["f_mentions"] = .list(["none:general"])
        item["f_tags"] = .list(["kept", "as is"])
        item["refKeys"] = .list(["channel", "mentions"])
        try container.privateDatabase.save(item, savePolicy: .allKeys)

        let id = RecordID(recordName: "old-message")
        let queued = try #require(try engine.outboxEntry(for: id))
        #expect(queued.state == .pending)
        #expect(queued.record?["text"] == "queued before the upgrade")

        try engine.sendOnce()
        #expect(try engine.state(of: id) == .sent)
        let sent = try container.publicDatabase.record(for: id)
        #expect(sent.recordType == "Message")
        #expect(sent["text"] == "queued before the upgrade")
        #expect(sent["channel"] == .reference(Reference(recordID: RecordID(recordName: "general"), action: .deleteSelf)))
        #expect(sent["mentions"] == .list([.reference(Reference(recordID: RecordID(recordName: "general")))]))
        #expect(sent["tags"] == .list(["kept", "as is"]))
        #expect(sent.allKeys.allSatisfy { !$0.hasPrefix("f_") })

        // Deleting its channel deletes it: the reference kept its action.
        try container.publicDatabase.deleteRecord(withID: RecordID(recordName: "general"))
        #expect((try? container.publicDatabase.record(for: id)) == nil)
    }
}
