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

        // Kept in the store's own field text, its bytes and the file beside it.
        let item = try container.privateDatabase.record(for: RecordID(recordName: "everything", zoneID: Outbox.zone))
        #expect(item["record"] == nil)
        #expect(item["fields"]?.stringValue?.contains(#""text":{"t":"s","v":"a \"quoted\" line\nand f_text, refKeys"}"#) == true)
        #expect(item["bytes"]?.listValue?.count == 3)
        #expect(item["assets"]?.listValue?.count == 1)

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
        try queueAsAnOlderBuild("old-message", in: container, [
            "op": "save", "f_text": "queued before the upgrade", "f_channel": "deleteSelf:general",
            "f_mentions": .list(["none:general"]), "f_tags": .list(["kept", "as is"]), "refKeys": .list(["channel", "mentions"]),
        ])
        let id = RecordID(recordName: "old-message")
        let sent = try sentAfterTheUpgrade(id, by: engine, text: "queued before the upgrade")
        #expect(sent["channel"] == .reference(Reference(recordID: RecordID(recordName: "general"), action: .deleteSelf)))
        #expect(sent["mentions"] == .list([.reference(Reference(recordID: RecordID(recordName: "general")))]))
        #expect(sent["tags"] == .list(["kept", "as is"]))
        #expect(sent.allKeys.allSatisfy { !$0.hasPrefix("f_") })

        // Deleting its channel deletes it: the reference kept its action.
        try container.publicDatabase.deleteRecord(withID: RecordID(recordName: "general"))
        #expect((try? container.publicDatabase.record(for: id)) == nil)
    }

    @Test func aSaveTheCodableTextFormQueuedIsSentAfterTheUpgrade() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        try container.publicDatabase.save(Record(recordType: "Channel", recordID: RecordID(recordName: "general")))
        let engine = try SyncEngine(container: container, configuration: .stepped())
        let file = dir.path("notes.txt")
        try Data("queued with its file".utf8).write(to: file)

        // As the builds between the field-by-field form and the store's text wrote it: Foundation's JSON
        // under `record` (dates since 2001), assets and bytes beside it by place.
        let text = #"{"fields":{"at":{"scalar":{"_0":{"date":{"_0":721692800}}}},"#
            + #""count":{"scalar":{"_0":{"int64":{"_0":9007199254740993}}}},"ratio":{"scalar":{"_0":{"double":{"_0":0.1}}}},"#
            + #""text":{"scalar":{"_0":{"string":{"_0":"a \"q\"\/x"}}}},"#
            + #""where":{"scalar":{"_0":{"location":{"_0":{"longitude":13.4,"altitude":34,"latitude":52.5}}}}},"#
            + #""raw":{"scalar":{"_0":{"bytes":{"_0":0}}}},"chunks":{"list":{"_0":[{"bytes":{"_0":1}},{"bytes":{"_0":2}}]}},"#
            + #""channel":{"scalar":{"_0":{"reference":{"_0":{"action":"deleteSelf","recordID":{"zoneID":"#
            + #"{"ownerName":"__defaultOwner__","zoneName":"_defaultZone"},"recordName":"general"}}}}}},"#
            + #""attachment":{"scalar":{"_0":{"asset":{"_0":0}}}}}}"#
        try queueAsAnOlderBuild("text-form", in: container, [
            "op": "save", "record": .string(text), "assets": .list([.asset(Asset(fileURL: file))]),
            "bytes": .list([.bytes(Data([0, 255, 10])), .bytes(Data([1])), .bytes(Data([2, 3]))]),
        ])
        let sent = try sentAfterTheUpgrade(RecordID(recordName: "text-form"), by: engine, text: "a \"q\"/x")
        #expect(sent["at"] == .date(Date(timeIntervalSince1970: 1_700_000_000)))
        #expect(sent["count"] == .int64(9_007_199_254_740_993))
        #expect(sent["ratio"] == .double(0.1))
        #expect(sent["where"] == .location(Location(latitude: 52.5, longitude: 13.4, altitude: 34)))
        #expect(sent["raw"] == .bytes(Data([0, 255, 10])))
        #expect(sent["chunks"] == .list([.bytes(Data([1])), .bytes(Data([2, 3]))]))
        #expect(sent["channel"] == .reference(Reference(recordID: RecordID(recordName: "general"), action: .deleteSelf)))
        let asset = try #require(sent["attachment"]?.assetValue)
        #expect(try Data(contentsOf: asset.fileURL) == Data("queued with its file".utf8))
    }

    @Test func aDamagedOutboxRowFailsWithAClearErrorAndNothingIsLost() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let engine = try SyncEngine(container: container, configuration: .stepped())
        var good = Record(recordType: "Message", recordID: RecordID(recordName: "good"))
        good["text"] = "still sent"
        try engine.send(saving: [good])

        // Outbox records as a bad disk or a hand with sqlite3 may leave them, queued before the good one.
        let damaged: [(name: String, fields: [String: FieldValue], cause: String)] = [
            ("garbled", ["op": "save", "fields": "{not json"], "not valid JSON"),
            ("wrongType", ["op": "save", "fields": #"{"text":{"t":"s","v":5}}"#], "Stored field 'text' has a value that does not fit its type 's'"),
            ("missingBytes", ["op": "save", "fields": #"{"raw":{"t":"b","v":3}}"#, "bytes": .list([.bytes(Data([1]))])], "does not fit its type 'b'"),
            ("fieldsNotText", ["op": "save", "fields": 5], "Its fields are not text"),
            ("bytesNotBytes", ["op": "save", "fields": "{}", "bytes": .list(["x"])], "Its bytes are not a list"),
            ("oldText", ["op": "save", "record": #"{"fields":5}"#], "Its record text does not decode"),
            ("oldTextMissingAsset", ["op": "save", "record": #"{"fields":{"f":{"scalar":{"_0":{"asset":{"_0":0}}}}}}"#],
             "Its field 'f' names bytes or an asset that it does not hold"),
            ("noOp", ["op": "explode"], "Its operation is not one the outbox writes"),
            ("badSubscription", ["op": "subscribe", "body": .bytes(Data("nope".utf8))], "Its subscription does not decode"),
        ]
        for (order, row) in damaged.enumerated() {
            try queueAsAnOlderBuild(row.name, in: container, order: Int64(order), row.fields)
        }

        try engine.sendOnce()
        #expect(try container.publicDatabase.record(for: good.recordID)["text"] == "still sent")
        #expect(try engine.state(of: good.recordID) == .sent)

        var events = EventCollector(engine: engine)
        events.drain()
        for row in damaged {
            let id = RecordID(recordName: row.name)
            guard case .failed(let code, let message) = try engine.state(of: id) else {
                Issue.record("\(row.name) is not marked failed")
                continue
            }
            #expect(code == .badDatabase, "\(row.name)")
            #expect(message.hasPrefix("The queued change to \(row.name) cannot be read from the outbox; it stays there"), "\(message)")
            #expect(message.contains(row.cause), "\(message)")
            #expect(events.received.contains { if case .sendFailed(id, let error) = $0 { error.message == message } else { false } }, "\(row.name)")
        }
        // Nothing was dropped or rewritten: every damaged row is there as it was, to mend or discard.
        #expect(try engine.outboxEntries().map(\.recordID.recordName).sorted() == damaged.map(\.name).sorted())
        for row in damaged {
            let item = try container.privateDatabase.record(for: RecordID(recordName: row.name, zoneID: Outbox.zone))
            for (key, value) in row.fields { #expect(item[key] == value, "\(row.name).\(key)") }
        }
        // Discarding one drops only that one.
        try engine.discard(RecordID(recordName: "garbled"))
        #expect(try engine.outboxEntries().count == damaged.count - 1)
    }

    /// Puts a pending outbox record for a Message straight into the private database, as another build left it.
    private func queueAsAnOlderBuild(_ name: String, in container: Container, order: Int64 = 1, _ fields: [String: FieldValue]) throws {
        var item = Record(recordType: Outbox.itemType, recordID: RecordID(recordName: name, zoneID: Outbox.zone))
        item["type"] = "Message"
        item["state"] = "pending"
        item["order"] = .int64(order)
        for (key, value) in fields { item[key] = value }
        try container.privateDatabase.save(item, savePolicy: .allKeys)
    }

    /// Reads the queued Message with `text`, sends it, and returns it as the public database holds it.
    private func sentAfterTheUpgrade(_ id: RecordID, by engine: SyncEngine, text: String) throws -> Record {
        let queued = try #require(try engine.outboxEntry(for: id))
        #expect(queued.state == .pending)
        #expect(queued.record?["text"] == .string(text))
        try engine.sendOnce()
        #expect(try engine.state(of: id) == .sent)
        let sent = try engine.container.publicDatabase.record(for: id)
        #expect(sent.recordType == "Message")
        #expect(sent["text"] == .string(text))
        return sent
    }
}
