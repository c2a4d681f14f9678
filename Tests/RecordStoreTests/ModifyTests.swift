import Foundation
import Testing
@testable import RecordStore

@Suite struct ModifyTests {
    @Test(arguments: TestEngine.available) func moreThan400ItemsIsLimitExceeded(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let records = (0..<401).map { _ in Record(recordType: "Note") }
        let error = #expect(throws: StoreError.self) { try db.modifyRecords(saving: records, deleting: []) }
        #expect(error?.code == .limitExceeded)
        #expect(try db.fetchChanges(since: nil).changedRecords.isEmpty)

        let result = try db.modifyRecords(saving: Array(records.prefix(300)), deleting: (0..<100).map { _ in RecordID() })
        #expect(result.saveResults.values.allSatisfy { (try? $0.get()) != nil })
        #expect(result.deleteResults.values.allSatisfy { $0.failure?.code == .unknownItem })
    }

    @Test(arguments: TestEngine.available) func eachItemHasAResultAndFailuresArePartial(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let good = Record(recordType: "Note")
        var dangling = Record(recordType: "Note")
        dangling["parent"] = .reference(Reference(recordID: RecordID(recordName: "nobody")))
        let missing = RecordID(recordName: "missing")

        let result = try db.modifyRecords(saving: [good, dangling], deleting: [missing])
        #expect((try? result.saveResults[good.recordID]?.get()) != nil)
        #expect(result.saveResults[dangling.recordID]?.failure?.code == .referenceViolation)
        #expect(result.deleteResults[missing]?.failure?.code == .unknownItem)
        let partial = try #require(result.partialFailure)
        #expect(partial.code == .partialFailure)
        #expect(Set(partial.partialErrors.keys) == [dangling.recordID, missing])
        #expect(throws: StoreError.self) { try result.check() }

        // The good item was saved even though others failed: the default zone is not atomic.
        #expect((try? db.record(for: good.recordID)) != nil)
        #expect((try? db.record(for: dangling.recordID)) == nil)
    }

    @Test(arguments: TestEngine.available) func ifServerRecordUnchangedDetectsConflictsWithAllThreeRecords(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        var original = Record(recordType: "Note")
        original["text"] = "v1"
        let saved = try db.save(original)

        var mine = saved
        mine["text"] = "mine"
        var theirs = saved
        theirs["text"] = "theirs"
        try db.save(theirs)

        let error = #expect(throws: StoreError.self) { try db.save(mine) }
        #expect(error?.code == .serverRecordChanged)
        #expect(error?.clientRecord?["text"] == "mine")
        #expect(error?.serverRecord?["text"] == "theirs")
        #expect(error?.ancestorRecord?["text"] == "v1")
        #expect(try db.record(for: saved.recordID)["text"] == "theirs")

        // Resolving on top of the server record succeeds.
        var resolved = try #require(error?.serverRecord)
        resolved["text"] = "merged"
        #expect(try db.save(resolved)["text"] == "merged")
    }

    @Test(arguments: TestEngine.available) func aNewRecordWithAnExistingIDConflicts(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let id = RecordID(recordName: "fixed")
        try db.save(Record(recordType: "Note", recordID: id))
        let error = #expect(throws: StoreError.self) { try db.save(Record(recordType: "Note", recordID: id)) }
        #expect(error?.code == .serverRecordChanged)
        #expect(error?.ancestorRecord == nil)
    }

    @Test(arguments: TestEngine.available) func savingAFetchedCopyOfADeletedRecordIsUnknownItem(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        var saved = try db.save(Record(recordType: "Note"))
        try db.deleteRecord(withID: saved.recordID)
        saved["text"] = "late edit"
        #expect((#expect(throws: StoreError.self) { try db.save(saved) })?.code == .unknownItem)
        #expect(throws: Never.self) { try db.save(saved, savePolicy: .allKeys) }
    }

    @Test(arguments: TestEngine.available) func changedKeysWritesOnlyWhatThisCopyChanged(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        var record = Record(recordType: "Profile")
        record["first"] = "Ada"
        record["last"] = "Lovelace"
        record["city"] = "London"
        let saved = try db.save(record)

        var a = saved
        a["first"] = "Augusta"
        a["city"] = nil
        var b = saved
        b["last"] = "King"
        try db.save(b)
        try db.save(a, savePolicy: .changedKeys)

        let stored = try db.record(for: saved.recordID)
        #expect(stored["first"] == "Augusta")
        #expect(stored["last"] == "King")
        #expect(stored["city"] == nil)
    }

    @Test(arguments: TestEngine.available) func allKeysOverwritesRegardlessOfTag(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        var record = Record(recordType: "Profile")
        record["first"] = "Ada"
        record["last"] = "Lovelace"
        let saved = try db.save(record)

        var other = saved
        other["first"] = "Grace"
        try db.save(other)

        var stale = saved
        stale.replaceFields(["last": "Hopper"])
        try db.save(stale, savePolicy: .allKeys)
        let stored = try db.record(for: saved.recordID)
        #expect(stored["first"] == nil)
        #expect(stored["last"] == "Hopper")
    }

    @Test(arguments: TestEngine.available) func aConditionalDeleteKeepsARecordChangedSinceItWasRead(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        var record = try db.save(Record(recordType: "Note"))
        let staleTag = try #require(record.recordChangeTag)
        record["text"] = "changed meanwhile"
        let changed = try db.save(record)
        let refused = try db.modifyRecords(saving: [], deleting: [record.recordID], deletingOnlyIfUnchanged: [record.recordID: staleTag])
        #expect(refused.deleteResults[record.recordID]?.failure?.code == .serverRecordChanged)
        #expect(try db.record(for: record.recordID)["text"] == "changed meanwhile")
        let done = try db.modifyRecords(saving: [], deleting: [record.recordID],
                                        deletingOnlyIfUnchanged: [record.recordID: try #require(changed.recordChangeTag)])
        #expect(done.partialFailure == nil)
        #expect((try? db.record(for: record.recordID)) == nil)
    }

    @Test(arguments: TestEngine.available) func theSameRecordTwiceInOneOperationIsRefused(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let record = Record(recordType: "Note")
        let error = #expect(throws: StoreError.self) { try db.modifyRecords(saving: [record], deleting: [record.recordID]) }
        #expect(error?.code == .invalidArguments)
    }

    @Test(arguments: TestEngine.available) func aRecordCannotChangeItsType(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        let saved = try db.save(Record(recordType: "Note"))
        var other = Record(recordType: "Other", recordID: saved.recordID)
        other["x"] = 1
        let error = #expect(throws: StoreError.self) { try db.save(other, savePolicy: .allKeys) }
        #expect(error?.code == .invalidArguments)
    }
}

extension ModifyTests {
    /// A batch looks up what its records have stored before its first save; each record must get its own zone's copy.
    @Test(arguments: TestEngine.available) func aBatchFindsWhatEachRecordHasStoredInItsOwnZone(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).privateDatabase
        let a = ZoneID(zoneName: "A"), b = ZoneID(zoneName: "B")
        try db.saveZone(a)
        try db.saveZone(b)
        func note(_ name: String, in zone: ZoneID, _ text: String) -> Record {
            var record = Record(recordType: "Note", recordID: RecordID(recordName: name, zoneID: zone))
            record["text"] = .string(text)
            return record
        }
        var storedAX = try db.save(note("x", in: a, "a-x"))
        try db.save(note("y", in: a, "a-y"))
        try db.save(note("target", in: a, "only in A"))
        var storedBY = try db.save(note("y", in: b, "b-y"))

        storedAX["text"] = "a-x changed"
        storedBY["text"] = "b-y changed"
        var pointing = note("pointer", in: b, "points at B's target, which does not exist")
        pointing["to"] = .reference(Reference(recordID: RecordID(recordName: "target", zoneID: b)))
        let result = try db.modifyRecords(saving: [storedAX, note("x", in: b, "b-x new"), note("y", in: a, "a-y again"), storedBY, pointing],
                                          deleting: [], atomically: false)

        #expect((try? result.saveResults[storedAX.recordID]?.get())?["text"] == "a-x changed")
        #expect((try? result.saveResults[RecordID(recordName: "x", zoneID: b)]?.get())?["text"] == "b-x new", "nothing named x is stored in B")
        let conflict = result.saveResults[RecordID(recordName: "y", zoneID: a)]?.failure
        #expect(conflict?.code == .serverRecordChanged)
        #expect(conflict?.serverRecord?["text"] == "a-y", "the server record is A's y, not B's")
        #expect((try? result.saveResults[storedBY.recordID]?.get())?["text"] == "b-y changed")
        #expect(result.saveResults[pointing.recordID]?.failure?.code == .referenceViolation, "a target of that name exists only in A")
        #expect(try db.record(for: RecordID(recordName: "y", zoneID: a))["text"] == "a-y")
        #expect(try db.record(for: RecordID(recordName: "x", zoneID: b))["text"] == "b-x new")
    }

    /// A batch's new records are signed on several threads; each must carry the signature of its own content.
    @Test(arguments: TestEngine.available) func eachRecordOfABatchCarriesItsOwnSignature(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: engine)
        let keys = try #require(container.accountKeys)
        let records = (0..<64).map { index in
            var record = Record(recordType: "Note", recordID: RecordID(recordName: "note-\(index)"))
            record["text"] = .string("note number \(index)")
            return record
        }
        let result = try container.publicDatabase.modifyRecords(saving: records, deleting: [])
        #expect(result.partialFailure == nil)
        let fetched = try records.map { try container.publicDatabase.record(for: $0.recordID) }
        #expect(Set(fetched.compactMap(\.signature)).count == 64, "every record has a signature, and no two share one")
        #expect(keys.check(fetched) == Array(repeating: .verified, count: 64))
        #expect(fetched.map { $0["text"]?.stringValue } == records.map { $0["text"]?.stringValue })
    }

    /// A batch is signed while its first records are written; a record that cannot be signed (a date beside
    /// a number no one can store) fails as its item, after others were written, and an atomic batch undoes them.
    @Test(arguments: TestEngine.available) func aRecordThatCannotBeSignedMidBatchFailsAsItsItem(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: engine)
        let keys = try #require(container.accountKeys)
        func batch(_ prefix: String) -> [Record] {
            (0..<64).map { index in
                var record = Record(recordType: "Note", recordID: RecordID(recordName: "\(prefix)-\(index)"))
                record["text"] = .string("note number \(index)")
                if index == 40 {
                    record["when"] = .date(Date())
                    record["weight"] = .double(.infinity)
                }
                return record
            }
        }
        let bad = RecordID(recordName: "loose-40")
        let loose = try container.publicDatabase.modifyRecords(saving: batch("loose"), deleting: [])
        #expect(loose.saveResults[bad]?.failure?.code == .invalidArguments)
        #expect(loose.saveResults.values.filter { $0.failure != nil }.count == 1)
        let saved = try batch("loose").filter { $0.recordID != bad }.map { try container.publicDatabase.record(for: $0.recordID) }
        #expect(keys.check(saved) == Array(repeating: .verified, count: 63))
        #expect((try? container.publicDatabase.record(for: bad)) == nil)

        let whole = try container.publicDatabase.modifyRecords(saving: batch("whole"), deleting: [], atomically: true)
        #expect(whole.saveResults[RecordID(recordName: "whole-40")]?.failure?.code == .invalidArguments)
        #expect(whole.saveResults.values.filter { $0.failure?.code == .batchRequestFailed }.count == 63)
        #expect(try batch("whole").allSatisfy { (try? container.publicDatabase.record(for: $0.recordID)) == nil })
    }

    /// A record checked on its own leaves its verdict for the next process, unless it is checked without keeping it.
    @Test func aVerdictCheckedWithoutKeepingItIsNotLeftForTheNextProcess() throws {
        let dir = try TemporaryDirectory()
        let records = ["kept", "passing"].map { name in
            var record = Record(recordType: "Note", recordID: RecordID(recordName: name))
            record["text"] = .string(name)
            return record
        }
        let first = try dir.container()
        _ = try first.publicDatabase.modifyRecords(saving: records, deleting: [])
        let saved = try records.map { try first.publicDatabase.record(for: $0.recordID) }
        let firstKeys = try #require(first.accountKeys)
        #expect(firstKeys.check(saved[0]) == .verified)
        #expect(firstKeys.check(saved[1], keep: false) == .verified)
        firstKeys.keepVerdicts()

        let nextKeys = try #require(try dir.container().accountKeys)
        let before = nextKeys.signaturesVerified
        #expect(nextKeys.check(saved) == [.verified, .verified])
        #expect(nextKeys.signaturesVerified - before == 1, "only the record checked without keeping is verified again")
    }

    /// A page is prepared and checked on several threads; each verdict must land on its own line, in order.
    @Test func eachLineOfAPageGetsItsOwnVerdictInPlace() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let keys = try #require(container.accountKeys)
        let records = (0..<48).map { index in
            var record = Record(recordType: "Note", recordID: RecordID(recordName: "line-\(index)"))
            record["text"] = .string("line number \(index)")
            return record
        }
        _ = try container.publicDatabase.modifyRecords(saving: records, deleting: [])
        var page = try records.map { try container.publicDatabase.record(for: $0.recordID) }
        // Every third line changed after it was signed, every fifth (from the second) carries no signature.
        for index in page.indices where index % 3 == 0 { page[index]["text"] = .string("changed \(index)") }
        for index in page.indices where index % 5 == 1 { page[index].signature = nil }
        let expected: [SignatureCheck] = page.indices.map { index in
            index % 5 == 1 ? .unsigned : index % 3 == 0 ? .badSignature : .verified
        }
        #expect(keys.check(page) == expected)
        // Again, from the verdicts now kept in memory.
        #expect(keys.check(page) == expected)
    }
}

@Suite struct ZoneTests {
    @Test(arguments: TestEngine.available) func thePublicDatabaseHasOnlyTheDefaultZone(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        #expect(try db.allZones() == [.default])
        #expect((#expect(throws: StoreError.self) { try db.saveZone(ZoneID(zoneName: "Custom")) })?.code == .invalidArguments)
        let inZone = Record(recordType: "Note", recordID: RecordID(zoneID: ZoneID(zoneName: "Custom")))
        #expect((#expect(throws: StoreError.self) { try db.save(inZone) })?.code == .zoneNotFound)
        #expect(try db.allZones() == [.default])
    }

    @Test(arguments: TestEngine.available) func customZonesLiveInThePrivateDatabase(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).privateDatabase
        let zone = ZoneID(zoneName: "Drafts")
        try db.saveZone(zone)
        #expect(try db.allZones() == [.default, zone])
        let record = try db.save(Record(recordType: "Draft", recordID: RecordID(zoneID: zone)))
        #expect(try db.record(for: record.recordID).recordID.zoneID == zone)

        let nowhere = Record(recordType: "Draft", recordID: RecordID(zoneID: ZoneID(zoneName: "Nowhere")))
        #expect((#expect(throws: StoreError.self) { try db.save(nowhere) })?.code == .zoneNotFound)

        try db.deleteZone(zone)
        #expect(try db.allZones() == [.default])
        #expect((#expect(throws: StoreError.self) { try db.record(for: record.recordID) })?.code == .unknownItem)
        let changes = try db.fetchChanges(since: nil)
        #expect(changes.deletedRecords.map(\.recordID) == [record.recordID])
    }

    @Test(arguments: TestEngine.available) func aZoneWithoutFetchChangesKeepsNoChangeFeed(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).privateDatabase
        let queue = ZoneID(zoneName: "Queue"), journal = ZoneID(zoneName: "Journal")
        try db.saveZone(queue, capabilities: [])
        try db.saveZone(journal)
        #expect(try db.capabilities(of: queue) == [])
        #expect(try db.capabilities(of: journal) == .fetchChanges)
        #expect(try db.capabilities(of: .default) == .fetchChanges)
        #expect((#expect(throws: StoreError.self) { try db.capabilities(of: ZoneID(zoneName: "Nowhere")) })?.code == .zoneNotFound)

        let start = try db.currentChangeToken()
        let queued = try db.save(Record(recordType: "Job", recordID: RecordID(recordName: "job", zoneID: queue)))
        let noted = try db.save(Record(recordType: "Entry", recordID: RecordID(recordName: "entry", zoneID: journal)))
        try db.deleteRecord(withID: queued.recordID)
        #expect(try db.fetchChanges(since: start).changedRecords.map(\.recordID) == [noted.recordID], "the queue's save and delete are not in the feed")
        #expect(try db.fetchChanges(since: start).deletedRecords.isEmpty)
        #expect((#expect(throws: StoreError.self) { try db.fetchChanges(in: queue, since: nil) })?.code == .invalidArguments)
        #expect(try db.fetchChanges(in: journal, since: nil).changedRecords.map(\.recordID) == [noted.recordID])

        // Records in such a zone still save, conflict and delete as anywhere else.
        var job = try db.save(Record(recordType: "Job", recordID: RecordID(recordName: "job2", zoneID: queue)))
        var stale = job
        job["state"] = "done"
        job = try db.save(job)
        stale["state"] = "late"
        #expect((#expect(throws: StoreError.self) { try db.save(stale) })?.code == .serverRecordChanged)
        #expect(try db.record(for: job.recordID)["state"] == "done")

        // Turning the capability on starts the feed from then on.
        try db.saveZone(queue)
        let later = try db.currentChangeToken()
        try db.deleteZone(queue)
        #expect(try db.fetchChanges(since: later).deletedRecords.map(\.recordID) == [job.recordID])
    }

    @Test(arguments: TestEngine.available) func aBatchInACustomZoneIsAllOrNothing(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).privateDatabase
        let zone = ZoneID(zoneName: "Atomic")
        try db.saveZone(zone)
        let good = Record(recordType: "Item", recordID: RecordID(zoneID: zone))
        var bad = Record(recordType: "Item", recordID: RecordID(zoneID: zone))
        bad["link"] = .reference(Reference(recordID: RecordID(recordName: "ghost", zoneID: zone)))
        let alsoGood = Record(recordType: "Item", recordID: RecordID(zoneID: zone))

        let result = try db.modifyRecords(saving: [good, bad, alsoGood], deleting: [])
        #expect(result.saveResults[bad.recordID]?.failure?.code == .referenceViolation)
        #expect(result.saveResults[good.recordID]?.failure?.code == .batchRequestFailed)
        #expect(result.saveResults[alsoGood.recordID]?.failure?.code == .batchRequestFailed)
        #expect((try? db.record(for: good.recordID)) == nil)
        #expect(try db.fetchChanges(in: zone, since: nil).changes.isEmpty)

        // A check that fails before the transaction also fails the whole batch.
        var badKey = Record(recordType: "Item", recordID: RecordID(zoneID: zone))
        badKey["no good"] = 1
        let early = try db.modifyRecords(saving: [good, badKey], deleting: [])
        #expect(early.saveResults[badKey.recordID]?.failure?.code == .invalidArguments)
        #expect(early.saveResults[good.recordID]?.failure?.code == .batchRequestFailed)

        let fine = try db.modifyRecords(saving: [good, alsoGood], deleting: [])
        #expect(fine.partialFailure == nil)
        #expect(try db.fetchChanges(in: zone, since: nil).changedRecords.count == 2)
    }

    /// A record saved over and over (a heartbeat) is signed under the lock only; saved new again after a delete,
    /// it is signed as new, and a signature left on it from an old version counts for nothing.
    @Test(arguments: TestEngine.available) func aRecordReplacedLatelyIsSignedAsWhatItTurnsOutToBe(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: engine)
        let db = container.publicDatabase
        let keys = try #require(container.accountKeys)
        let id = RecordID(recordName: "presence.me")
        func beat(_ n: Int, signature: FieldValue? = nil) throws -> Record {
            var record = Record(recordType: "Presence", recordID: id)
            record["seen"] = .date(Date(timeIntervalSinceReferenceDate: 8e8 + Double(n) / 7))
            record["state"] = .string("online \(n)")
            record.signature = signature
            try db.modifyRecords(saving: [record], deleting: [], savePolicy: .allKeys).check()
            return try db.record(for: id)
        }
        var last = try beat(0)
        #expect(keys.check(last, keep: false) == .verified)
        for n in 1...3 {
            let stored = try beat(n)
            #expect(keys.check(stored, keep: false) == .verified)
            #expect(RecordSignature.parse(stored.signature)?.replacing == last.recordChangeTag)
            last = stored
        }
        try db.modifyRecords(saving: [], deleting: [id]).check()
        let again = try beat(4, signature: last.signature)
        #expect(keys.check(again, keep: false) == .verified)
        #expect(RecordSignature.parse(again.signature)?.replacing == nil)
    }

    /// A date no reader would take (outside the years 1 to 9999) is refused when saved, alone or in a list,
    /// in either database, rather than stored where it reads as damage.
    @Test(arguments: TestEngine.available) func aDateNoReaderTakesIsRefusedWhenSaved(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: engine)
        let last = Date(timeIntervalSince1970: 253_402_300_799), beyond = Date(timeIntervalSince1970: 253_402_300_800)
        for db in [container.publicDatabase, container.privateDatabase] {
            for value: FieldValue in [.date(beyond), .list([.date(last), .date(beyond)]), .date(Date(timeIntervalSince1970: -62_135_596_801))] {
                var record = Record(recordType: "Note")
                record["when"] = value
                let result = try db.modifyRecords(saving: [record], deleting: [])
                #expect(result.saveResults[record.recordID]?.failure?.code == .invalidArguments, "\(db.scope) \(value)")
                #expect((try? db.record(for: record.recordID)) == nil)
            }
            var record = Record(recordType: "Note")
            record["when"] = .date(last)
            try db.modifyRecords(saving: [record], deleting: []).check()
            #expect(try db.record(for: record.recordID)["when"]?.dateValue == last)
        }
    }
}
