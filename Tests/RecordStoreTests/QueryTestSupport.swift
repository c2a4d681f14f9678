import Foundation
import GRDB
@testable import RecordStore

/// A container in a fresh temporary directory, removed when the value is released.
final class TemporaryContainer {
    let directory: TemporaryDirectory
    let container: Container

    /// A container on `engine` (see `TestEngine`); SQLite in local mode by default.
    init(engine: TestEngine = .sqlite) throws {
        directory = try TemporaryDirectory()
        container = try directory.container(engine: engine)
    }
}

/// A deterministic random generator (SplitMix64), so a failing property test can be rerun.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension RecordDatabase {
    /// Writes records straight through the storage in one transaction, as saved at the given dates: fast seeding for tests.
    func seed(_ records: [RecordStore.Record], creator: RecordID) throws {
        try storage.write { writer in
            for var record in records {
                record.creationDate = record.creationDate ?? Date()
                record.modificationDate = record.modificationDate ?? record.creationDate
                record.creatorUserRecordID = creator
                record.lastModifiedUserRecordID = creator
                record.recordChangeTag = "seed"
                try writer.upsert(record, isNew: false)
            }
        }
    }

    /// Inserts rows straight into the record table, skipping references, assets and search text: seeding 100,000 records fast.
    func bulkInsert(_ records: [RecordStore.Record], creator: RecordID) throws {
        try storage.write { writer in
            guard let access = writer as? SQLiteAccess else { return }
            let insert = try access.db.cachedStatement(sql: """
                INSERT INTO record (zone, name, type, fields, created, modified, creator, modifier, tag)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'seed')
                """)
            for record in records {
                let created = (record.creationDate ?? Date()).timeIntervalSince1970
                try insert.execute(arguments: [record.recordID.zoneID.zoneName, record.recordID.recordName, record.recordType,
                                               try FieldCoding.encode(record.fields), created, created, creator.recordName, creator.recordName])
            }
        }
    }

    /// The plan SQLite picks for a query.
    func queryPlan(_ query: Query, zone: ZoneID? = nil, cursor: QueryCursor? = nil) throws -> [String] {
        let request = QueryRequest(query: query, zone: zone?.zoneName, desiredKeys: nil, after: cursor?.position, limit: 51)
        return try storage.read { reader in
            guard let access = reader as? SQLiteAccess else { return [] }
            return try access.queryPlan(request)
        }
    }
}
