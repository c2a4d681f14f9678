import Foundation
import GRDB

/// The same questions the chat asks, written by hand in SQL over the same file and indexes.
///
/// Rows are read into plain values (no JSON decoding), which is the least a
/// caller could do; the gap to `RecordStore` is what its layers cost.
struct HandSQL {
    /// One row as the hand-written queries read it.
    struct Row: Sendable {
        var id: Int64
        var name: String
        var fields: String
        var created: Double
    }

    let queue: DatabaseQueue

    /// Opens the container's public database read-only.
    static func open(_ container: URL) throws -> DatabaseQueue {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(5)
        return try DatabaseQueue(path: container.appendingPathComponent("public.sqlite").path, configuration: config)
    }

    init(container: URL) throws {
        queue = try Self.open(container)
    }

    private static let columns = "id, zone, name, type, fields, created, modified, creator, modifier, tag"
    private static let channelKey = "json_extract(fields, '$.channel.v')"

    /// The newest `limit` messages of a channel, or those older than `after` (created, id), by keyset.
    func messages(channelRecordName: String, after: (created: Double, id: Int64)?, limit: Int = 50) throws -> [Row] {
        try queue.read { db in
            if let after {
                return try fetch(db, sql: """
                    SELECT \(Self.columns) FROM record
                    WHERE type = 'Message' AND \(Self.channelKey) = ? AND zone = '_defaultZone'
                      AND created <= ? AND (created < ? OR (created = ? AND id < ?))
                    ORDER BY created DESC, id DESC LIMIT ?
                    """, [channelRecordName, after.created, after.created, after.created, after.id, limit])
            }
            return try fetch(db, sql: """
                SELECT \(Self.columns) FROM record
                WHERE type = 'Message' AND \(Self.channelKey) = ? AND zone = '_defaultZone'
                ORDER BY created DESC, id DESC LIMIT ?
                """, [channelRecordName, limit])
        }
    }

    /// The newest `limit` messages containing `token`, through the FTS5 table.
    func search(token: String, limit: Int = 50) throws -> [Row] {
        try queue.read { db in
            try fetch(db, sql: """
                SELECT \(Self.columns) FROM record
                WHERE type = 'Message' AND id IN (SELECT rowid FROM record_search WHERE record_search MATCH ?)
                ORDER BY created DESC, id DESC LIMIT ?
                """, ["\"\(token)\"", limit])
        }
    }

    /// Every channel, oldest first.
    func channels() throws -> [Row] {
        try queue.read { db in
            try fetch(db, sql: "SELECT \(Self.columns) FROM record WHERE type = 'Channel' ORDER BY created, id", [])
        }
    }

    /// The query plan of the newest-50 query, to show which index it uses.
    func newestPlan(channelRecordName: String) throws -> [String] {
        try queue.read { db in
            try GRDB.Row.fetchAll(db, sql: """
                EXPLAIN QUERY PLAN SELECT \(Self.columns) FROM record
                WHERE type = 'Message' AND \(Self.channelKey) = ? AND zone = '_defaultZone'
                ORDER BY created DESC, id DESC LIMIT 50
                """, arguments: [channelRecordName]).map { $0["detail"] }
        }
    }

    private func fetch(_ db: Database, sql: String, _ arguments: [any DatabaseValueConvertible]) throws -> [Row] {
        var rows: [Row] = []
        let cursor = try GRDB.Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
        while let row = try cursor.next() {
            rows.append(Row(id: row["id"], name: row["name"], fields: row["fields"], created: row["created"]))
        }
        return rows
    }
}
