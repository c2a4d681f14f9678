import Foundation
import GRDB

extension SQLiteAccess {
    func recordTypeSummary() throws -> [RecordTypeSummary] {
        let counts = try Row.fetchAll(db, sql: "SELECT type, count(*) AS n FROM record GROUP BY type ORDER BY type")
        return try counts.map { row in
            let type: String = row["type"]
            let fields = try Row.fetchAll(db, sql: """
                SELECT DISTINCT field.key AS key, json_extract(field.value, '$.t') AS tag, json_extract(field.value, '$.e') AS element
                FROM record, json_each(record.fields) AS field WHERE record.type = ?
                """, arguments: [type])
            var types: [String: String] = [:]
            for field in fields {
                let tag: String = field["tag"] ?? "?"
                let element: String? = field["element"]
                types[field["key"]] = tag == "L" ? "List<\(Self.tagNames[element ?? ""] ?? "?")>" : Self.tagNames[tag] ?? tag
            }
            return RecordTypeSummary(recordType: type, count: row["n"], fields: types)
        }
    }

    private static let tagNames = [
        "s": "String", "i": "Int64", "d": "Double", "b": "Bytes", "t": "Date",
        "l": "Location", "r": "Reference", "a": "Asset", "": "empty",
    ]

    func integrityProblems() throws -> [String] {
        var problems = try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
        problems += try String.fetchAll(db, sql: "PRAGMA foreign_key_check").map { "foreign key problem in table \($0)" }
        let badJSON = try Int.fetchOne(db, sql: "SELECT count(*) FROM record WHERE json_valid(fields) = 0") ?? 0
        if badJSON > 0 { problems.append("\(badJSON) record(s) have damaged fields") }
        let dangling = try Int.fetchOne(db, sql: """
            SELECT count(*) FROM reference WHERE cascade = 1
            AND NOT EXISTS (SELECT 1 FROM record WHERE record.zone = reference.zone AND record.name = reference.target)
            """) ?? 0
        if dangling > 0 { problems.append("\(dangling) record(s) hold a deleteSelf reference to a record that is gone") }
        problems += AssetStore(directory: assets).problems(inUse: try String.fetchAll(db, sql: "SELECT DISTINCT hash FROM asset_use"))
        return problems
    }

    func eraseAll() throws -> Set<String> {
        let hashes = Set(try String.fetchAll(db, sql: "SELECT DISTINCT hash FROM asset_use"))
        try db.execute(sql: "DELETE FROM record")
        try db.execute(sql: "DELETE FROM change")
        try db.execute(sql: "DELETE FROM subscription")
        try db.execute(sql: "DELETE FROM record_search")
        try db.execute(sql: "UPDATE fatchat_meta SET value = (SELECT seq FROM sqlite_sequence WHERE name = 'change') WHERE key = 'pruned_through' AND EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'change')")
        return hashes
    }
}
