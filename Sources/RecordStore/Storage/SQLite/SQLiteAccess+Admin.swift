import Foundation
import GRDB

extension SQLiteAccess {
    func recordTypeSummary() throws -> [RecordTypeSummary] {
        // Values are read as SQLite stored them: any column of a shared file may hold any type.
        let counts = try Row.fetchAll(db, sql: "SELECT type, count(*) AS n FROM record GROUP BY type ORDER BY type")
        return try counts.compactMap { row in
            guard case .string(let type) = try StoredColumns.value(row, 0).storage else { return nil }
            let fields = try Row.fetchAll(db, sql: """
                SELECT DISTINCT field.key AS key, json_extract(field.value, '$.t') AS tag, json_extract(field.value, '$.e') AS element
                FROM record, json_each(CASE WHEN json_valid(record.fields) AND json_type(record.fields) = 'object' THEN record.fields ELSE '{}' END) AS field
                WHERE record.type = ? AND json_type(field.value) = 'object'
                """, arguments: [type])
            var types: [String: String] = [:]
            for field in fields {
                // The signature is kept beside the fields, not as one of them.
                guard let key = try StoredColumns.textIfAny(field, 0), key != RecordSignature.fieldKey else { continue }
                let tag = try StoredColumns.textIfAny(field, 1) ?? "?"
                let element = try StoredColumns.textIfAny(field, 2) ?? ""
                types[key] = tag == "L" ? "List<\(Self.tagNames[element] ?? "?")>" : Self.tagNames[tag] ?? tag
            }
            return RecordTypeSummary(recordType: type, count: Int(Int64.fromDatabaseValue(try StoredColumns.value(row, 1)) ?? 0), fields: types)
        }
    }

    private static let tagNames = [
        "s": "String", "i": "Int64", "d": "Double", "b": "Bytes", "t": "Date",
        "l": "Location", "r": "Reference", "a": "Asset", "": "empty",
    ]

    func integrityProblems() throws -> [String] {
        var problems = try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
        problems += try String.fetchAll(db, sql: "PRAGMA foreign_key_check").map { "foreign key problem in table \($0)" }
        problems += try SchemaCheck.problems(db, naming: naming).map { "schema: " + $0 }
        problems += try damagedRows().map { "damaged row: \($0)" }
        let dangling = try Int.fetchOne(db, sql: """
            SELECT count(*) FROM reference WHERE cascade = 1
            AND NOT EXISTS (SELECT 1 FROM record WHERE record.zone = reference.zone AND record.name = reference.target)
            """) ?? 0
        if dangling > 0 { problems.append("\(dangling) record(s) hold a deleteSelf reference to a record that is gone") }
        // CAST: a blob planted in the column reads as text, never as a decoding failure.
        problems += AssetStore(directory: assets, naming: naming).problems(inUse: try String.fetchAll(db, sql: "SELECT DISTINCT CAST(hash AS TEXT) FROM asset_use"))
        return problems
    }

    /// Every row of the record, change, subscription, field mark, zone and meta tables that a reader would skip.
    ///
    /// The same decoders as the readers run, over whole tables: slow on a big
    /// database, which is why only `admin check` calls it.
    func damagedRows() throws -> [DamagedRow] {
        var damaged: [DamagedRow] = []
        func note(_ body: () throws -> Void) throws {
            do { try body() } catch let damage as DamagedRow { damaged.append(damage) }
        }
        let records = try Row.fetchCursor(db, sql: "SELECT id, zone, name, \(Self.recordColumns) FROM record ORDER BY id")
        while let row = try records.next() {
            // A table whose definition was rewritten is reported by the schema check; its rows are read without trusting it.
            let rowID = Int64.fromDatabaseValue(try StoredColumns.value(row, 0)) ?? 0
            try note {
                try StoredColumns.decoding("record", key: "rowid \(rowID)") {
                    let id = RecordID(recordName: try StoredColumns.text(row, 2, "name"), zoneID: ZoneID(zoneName: try StoredColumns.text(row, 1, "zone")))
                    _ = try Self.decodeRecord(row, from: 3, id: id, assets: assets, keys: nil)
                }
            }
        }
        var after: Int64 = 0
        while true {
            let scan = try changes(after: after, zone: nil, limit: 1_000, reporting: { damaged.append($0) })
            guard let last = scan.sequences.last else { break }
            after = last
        }
        let subscriptions = try Row.fetchCursor(db, sql: "SELECT owner, id, body FROM subscription ORDER BY owner, id")
        while let row = try subscriptions.next() {
            try note {
                try StoredColumns.decoding("subscription", key: "\(StoredColumns.label(row, 0))/\(StoredColumns.label(row, 1))") {
                    _ = try Subscription(storedID: try StoredColumns.text(row, 1, "id"), body: try StoredColumns.text(row, 2, "body"),
                                         owner: try StoredColumns.text(row, 0, "owner"))
                }
            }
        }
        let marks = try Row.fetchCursor(db, sql: "SELECT type, key, options FROM field_mark ORDER BY type, key")
        while let row = try marks.next() {
            try note {
                try StoredColumns.decoding("field_mark", key: "\(StoredColumns.label(row, 0)).\(StoredColumns.label(row, 1))") {
                    guard Identifier.isValid(try StoredColumns.text(row, 0, "type")), Identifier.isValid(try StoredColumns.text(row, 1, "key")) else {
                        throw StoredColumns.Mismatch(problem: "its type or key is not an identifier")
                    }
                    _ = try StoredColumns.integer(row, 2, "options")
                }
            }
        }
        let zones = try Row.fetchCursor(db, sql: "SELECT name, created, changes FROM zone ORDER BY name")
        while let row = try zones.next() {
            try note {
                try StoredColumns.decoding("zone", key: StoredColumns.label(row, 0)) {
                    _ = try StoredColumns.text(row, 0, "name")
                    _ = try StoredColumns.date(row, 1, "created")
                    _ = try StoredColumns.integer(row, 2, "changes")
                }
            }
        }
        // A damaged record is met again through its changes: list it once.
        var seen: Set<DamagedRow> = []
        return damaged.filter { seen.insert($0).inserted }
    }

    /// The bulky tables `eraseAll` empties a batch at a time: how to count each, and how to delete up to `?` of its rows.
    /// A record's references and asset uses go with it, by their foreign keys.
    private static let erasedInBatches = [
        ("SELECT count(*) FROM record", "DELETE FROM record WHERE id IN (SELECT id FROM record LIMIT ?)"),
        ("SELECT count(*) FROM record_search", "DELETE FROM record_search WHERE rowid IN (SELECT rowid FROM record_search LIMIT ?)"),
        ("SELECT count(*) FROM change", "DELETE FROM change WHERE seq IN (SELECT seq FROM change LIMIT ?)"),
    ]

    func eraseAll(progress: (ErasureProgress) -> Void) throws -> Set<String> {
        let hashes = Set(try String.fetchAll(db, sql: "SELECT DISTINCT CAST(hash AS TEXT) FROM asset_use"))
        var erased = ErasureProgress(done: 0, total: 0)
        for (count, _) in Self.erasedInBatches { erased.total += try Int.fetchOne(db, sql: count) ?? 0 }
        progress(erased)
        for (_, delete) in Self.erasedInBatches {
            repeat {
                try db.execute(sql: delete, arguments: [10_000])
                erased.done = min(erased.total, erased.done + db.changesCount)
                progress(erased)
            } while db.changesCount > 0
        }
        // Whatever a batch's count missed, and the small tables, go in one statement each.
        try db.execute(sql: "DELETE FROM record")
        try db.execute(sql: "DELETE FROM change")
        try db.execute(sql: "DELETE FROM subscription")
        try db.execute(sql: "DELETE FROM record_search")
        try db.execute(sql: "UPDATE fatchat_meta SET value = (SELECT seq FROM sqlite_sequence WHERE name = 'change') WHERE key = 'pruned_through' AND EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'change')")
        return hashes
    }
}
