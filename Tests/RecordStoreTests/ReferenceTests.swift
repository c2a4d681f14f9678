import Foundation
import Testing
@testable import RecordStore

@Suite struct ReferenceTests {
    private func child(of parent: RecordID, _ action: Reference.Action, type: String = "Child") -> Record {
        var record = Record(recordType: type, recordID: RecordID(zoneID: parent.zoneID))
        record["parent"] = .reference(Reference(recordID: parent, action: action))
        return record
    }

    @Test(arguments: TestEngine.available) func deleteSelfCascadesRecursivelyWithAChangeForEachRecord(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let channel = try db.save(Record(recordType: "Channel"))
        let token = try db.currentChangeToken()
        let messages = try (0..<3).map { _ in try db.save(child(of: channel.recordID, .deleteSelf, type: "Message")) }
        let reactions = try messages.map { try db.save(child(of: $0.recordID, .deleteSelf, type: "Reaction")) }
        let bystander = try db.save(Record(recordType: "Other"))

        let result = try db.modifyRecords(saving: [], deleting: [channel.recordID])
        try result.check()
        #expect(Set(result.cascadedDeletions) == Set((messages + reactions).map(\.recordID)))
        for record in messages + reactions + [channel] {
            #expect((#expect(throws: StoreError.self) { try db.record(for: record.recordID) })?.code == .unknownItem)
        }
        #expect((try? db.record(for: bystander.recordID)) != nil)

        let changes = try db.fetchChanges(since: token)
        let deletions = changes.changes.filter { $0.kind == .deleted }
        #expect(deletions.count == 7)
        #expect(Set(changes.deletedRecords.map(\.recordID)) == Set((messages + reactions + [channel]).map(\.recordID)))
        #expect(deletions.first { $0.recordType == "Reaction" }?.previousFields?["parent"] != nil)
    }

    @Test(arguments: TestEngine.available) func cascadesAreSafeWithCycles(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let a = RecordID(recordName: "a")
        let b = RecordID(recordName: "b")
        var first = Record(recordType: "Node", recordID: a)
        first["next"] = .reference(Reference(recordID: b, action: .deleteSelf))
        var second = Record(recordType: "Node", recordID: b)
        second["next"] = .reference(Reference(recordID: a, action: .deleteSelf))
        var selfLoop = Record(recordType: "Node", recordID: RecordID(recordName: "loop"))
        selfLoop["next"] = .reference(Reference(recordID: selfLoop.recordID, action: .deleteSelf))
        try db.modifyRecords(saving: [first, second, selfLoop], deleting: []).check()

        try db.deleteRecord(withID: a)
        #expect((try? db.record(for: b)) == nil)
        try db.deleteRecord(withID: selfLoop.recordID)
        #expect((try? db.record(for: selfLoop.recordID)) == nil)
    }

    @Test(arguments: TestEngine.available) func noneLeavesChildrenAlone(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let parent = try db.save(Record(recordType: "Parent"))
        let kept = try db.save(child(of: parent.recordID, .none))
        let cascaded = try db.save(child(of: parent.recordID, .deleteSelf))
        try db.deleteRecord(withID: parent.recordID)
        let survivor = try db.record(for: kept.recordID)
        #expect(survivor["parent"]?.referenceValue?.recordID == parent.recordID)
        #expect((try? db.record(for: cascaded.recordID)) == nil)
    }

    @Test(arguments: TestEngine.available) func referencesInAListCascadeToo(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let a = try db.save(Record(recordType: "Tag"))
        let b = try db.save(Record(recordType: "Tag"))
        var tagged = Record(recordType: "Post")
        tagged["tags"] = .list([.reference(Reference(a, action: .none)), .reference(Reference(b, action: .deleteSelf))])
        try db.save(tagged)
        try db.deleteRecord(withID: a.recordID)
        #expect((try? db.record(for: tagged.recordID)) != nil)
        try db.deleteRecord(withID: b.recordID)
        #expect((try? db.record(for: tagged.recordID)) == nil)
    }

    @Test(arguments: TestEngine.available) func aReferenceIntoAnotherZoneIsRefused(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).privateDatabase
        let zone = ZoneID(zoneName: "Elsewhere")
        try db.saveZone(zone)
        let target = try db.save(Record(recordType: "Target", recordID: RecordID(zoneID: zone)))
        var holder = Record(recordType: "Holder")
        holder["link"] = .reference(Reference(target))
        let error = #expect(throws: StoreError.self) { try db.save(holder) }
        #expect(error?.code == .invalidArguments)
        #expect(error?.message.contains("zone") == true)
    }

    @Test(arguments: TestEngine.available) func aReferenceToNothingIsAReferenceViolation(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let orphan = child(of: RecordID(recordName: "never-saved"), .deleteSelf)
        #expect((#expect(throws: StoreError.self) { try db.save(orphan) })?.code == .referenceViolation)

        // A parent saved in the same batch counts, whatever the order.
        let parent = Record(recordType: "Parent")
        try db.modifyRecords(saving: [child(of: parent.recordID, .deleteSelf), parent], deleting: []).check()
    }

    // SQLite only: it forges the child's creator by hand in the file. On PostgreSQL the server forbids that;
    // PostgresPermissionTests tries it as another OS user.
    @Test(arguments: [TestEngine.sqlite]) func cascadeDeletesOthersRecordsButTheRootNeedsItsCreator(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let parent = try db.save(Record(recordType: "Parent"))
        let kid = try db.save(child(of: parent.recordID, .deleteSelf))
        // Pretend the child was made by someone else: the cascade must still remove it.
        try (db.storage as? SQLiteStorage)?.connections.write { database in
            try database.execute(sql: "UPDATE record SET creator = 'someone-else' WHERE name = ?", arguments: [kid.recordID.recordName])
        }
        #expect((#expect(throws: StoreError.self) { try db.deleteRecord(withID: kid.recordID) })?.code == .permissionFailure)
        try db.deleteRecord(withID: parent.recordID)
        #expect((try? db.record(for: kid.recordID)) == nil)
    }
}
