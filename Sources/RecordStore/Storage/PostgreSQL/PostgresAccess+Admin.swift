import Foundation
import PostgresNIO

/// Record type summaries, the integrity check and erasing, on PostgreSQL.
extension PostgresAccess {
    func recordTypeSummary() throws -> [RecordTypeSummary] {
        let counts = try link.rows("SELECT type, count(*) FROM fatchat.record GROUP BY type ORDER BY type")
        return try counts.map { row in
            let columns = PostgresColumns(row)
            let type = try columns.text(0, "type")
            var arguments = PostgresArguments()
            let fields = try link.rows("""
                SELECT DISTINCT f.key, f.value ->> 't', f.value ->> 'e'
                FROM fatchat.record r, jsonb_each(r.fields) AS f
                WHERE r.type = \(arguments.bind(type)) AND jsonb_typeof(f.value) = 'object'
                """, arguments.binds)
            var types: [String: String] = [:]
            for field in fields {
                let cells = PostgresColumns(field)
                // The signature is kept beside the fields, not as one of them.
                guard let key = try? cells.text(0, "key"), key != RecordSignature.fieldKey else { continue }
                let tag = (try? cells.optionalText(1, "tag")) ?? nil
                let element = (try? cells.optionalText(2, "element")) ?? nil
                types[key] = tag == "L" ? "List<\(Self.tagNames[element ?? ""] ?? "?")>" : Self.tagNames[tag ?? "?"] ?? (tag ?? "?")
            }
            return RecordTypeSummary(recordType: type, count: Int(try columns.integer(1, "count")), fields: types)
        }
    }

    private static let tagNames = [
        "s": "String", "i": "Int64", "d": "Double", "b": "Bytes", "t": "Date",
        "l": "Location", "r": "Reference", "a": "Asset", "": "empty",
    ]

    func integrityProblems() throws -> [String] {
        var problems: [String] = []
        var damaged: [DamagedRow] = []
        var lastID: Int64 = 0
        while true {
            var arguments = PostgresArguments()
            let rows = try link.rows("SELECT id, zone, name, \(Self.recordColumns) FROM fatchat.record WHERE id > \(arguments.bind(lastID)) ORDER BY id LIMIT 1000",
                                     arguments.binds)
            guard !rows.isEmpty else { break }
            for row in rows {
                let columns = PostgresColumns(row)
                lastID = try columns.integer(0, "id")
                do {
                    let id = RecordID(recordName: try columns.text(2, "name"), zoneID: ZoneID(zoneName: try columns.text(1, "zone")))
                    _ = try decodeRecord(columns, from: 3, id: id, keys: nil)
                } catch let damage as DamagedRow {
                    damaged.append(damage)
                }
            }
        }
        problems += damaged.map { "damaged row: \($0)" }
        if let row = try link.rows("""
            SELECT count(*) FROM fatchat.reference f WHERE f.cascade
            AND NOT EXISTS (SELECT 1 FROM fatchat.record r WHERE r.zone = f.zone AND r.name = f.target)
            """).first, case let dangling = try PostgresColumns(row).integer(0, "count"), dangling > 0 {
            problems.append("\(dangling) record(s) hold a deleteSelf reference to a record that is gone")
        }
        let missing = try link.rows("""
            SELECT DISTINCT u.hash FROM fatchat.asset_use u WHERE NOT EXISTS (SELECT 1 FROM fatchat.asset a WHERE a.hash = u.hash)
            """).compactMap { try? PostgresColumns($0).text(0, "hash") }
        problems += missing.map { "asset \($0) is used by a record, but the server holds no copy of it" }
        return problems
    }

    /// Each statement is one batch on the server: `progress` hears after the records (with their references,
    /// asset uses and search text, by their foreign keys) and after the changes.
    func eraseAll(progress: (ErasureProgress) -> Void) throws -> Set<String> {
        let hashes = Set(try link.rows("SELECT DISTINCT hash FROM fatchat.asset_use").compactMap { try? PostgresColumns($0).text(0, "hash") })
        let counts = try link.rows("SELECT (SELECT count(*) FROM fatchat.record), (SELECT count(*) FROM fatchat.change)").first
        let records = try counts.map { try PostgresColumns($0).integer(0, "records") } ?? 0
        let changes = try counts.map { try PostgresColumns($0).integer(1, "changes") } ?? 0
        var erased = ErasureProgress(done: 0, total: Int(records + changes))
        progress(erased)
        erased.done += try link.execute("DELETE FROM fatchat.record")
        progress(erased)
        try link.execute("DELETE FROM fatchat.subscription")
        let latest = try latestSequence()
        erased.done += try link.execute("DELETE FROM fatchat.change")
        progress(erased)
        var arguments = PostgresArguments()
        try link.execute("UPDATE fatchat.meta SET value = \(arguments.bind(String(latest))) WHERE key = 'pruned_through'", arguments.binds)
        return hashes
    }
}
