import Foundation
import PostgresNIO

/// The saves and change-log rows of a write transaction that are not sent yet.
///
/// A batch of saves goes to the server as one INSERT of all its records, one
/// of their references and one of their change-log rows, not as statements
/// per record: the server parses, plans and runs every statement while the
/// writer holds the write lock, and a statement of many rows costs little
/// more than one of a single row. Every other statement on the connection
/// sends these first (`PostgresAccess.link`), so it sees the writes before it.
final class PostgresWriteBuffer {
    /// One record to insert or replace, with what goes beside it.
    struct Save {
        var zone: String, name: String, type: String, fields: String
        var created: Double, modified: Double
        var creator: String, modifier: String, tag: String
        /// The search words, space-separated (a word never holds a space); `nil` for a type with no searchable field.
        var words: String?
        var isNew: Bool
        var links: [(target: String, cascade: Bool)]
        var hashes: [String]
    }

    /// One change-log row, in the order the transaction logged it.
    struct Change {
        var zone: String, name: String, type: String, kind: Int64, previous: String?, at: Double
    }

    var saves: [Save] = []
    var changes: [Change] = []

    /// How many saves are held before they go without waiting for another statement: a migration saves
    /// every record of a container in one transaction, and one INSERT of them all would be held in memory whole.
    static let limit = 1000

    var isFull: Bool { saves.count >= Self.limit || changes.count >= Self.limit }

    /// Everything buffered, leaving the buffer empty.
    func take() -> (saves: [Save], changes: [Change]) {
        defer { (saves, changes) = ([], []) }
        return (saves, changes)
    }
}

extension PostgresAccess {
    /// Sends what the buffer holds, without waiting: the COMMIT, or the next statement waited for, checks it.
    func sendBufferedWrites() {
        let (saves, changes) = buffer.take()
        if !saves.isEmpty { send(saves) }
        if !changes.isEmpty { send(changes) }
    }

    private func send(_ saves: [PostgresWriteBuffer.Save]) {
        var arguments = PostgresArguments()
        let sql = """
            INSERT INTO fatchat.record (zone, name, type, fields, created, modified, creator, modifier, tag, search)
            SELECT z, n, t, f::jsonb, c, m, cr, mo, tg, CASE WHEN hs THEN array_to_tsvector(string_to_array(s, ' ')) END
            FROM unnest(\(arguments.bind(saves.map(\.zone)))::text[], \(arguments.bind(saves.map(\.name)))::text[],
                        \(arguments.bind(saves.map(\.type)))::text[], \(arguments.bind(saves.map(\.fields)))::text[],
                        \(arguments.bind(saves.map(\.created)))::float8[], \(arguments.bind(saves.map(\.modified)))::float8[],
                        \(arguments.bind(saves.map(\.creator)))::text[], \(arguments.bind(saves.map(\.modifier)))::text[],
                        \(arguments.bind(saves.map(\.tag)))::text[], \(arguments.bind(saves.map { $0.words ?? "" }))::text[],
                        \(arguments.bind(saves.map { $0.words != nil }))::boolean[]) AS u (z, n, t, f, c, m, cr, mo, tg, s, hs)
            ON CONFLICT (zone, name) DO UPDATE SET
                type = excluded.type, fields = excluded.fields, modified = excluded.modified,
                modifier = excluded.modifier, tag = excluded.tag, search = excluded.search
            """
        let names = saves.map(\.name)
        transport.executeLater(sql, arguments.binds) { result in
            guard result.metadata.rows == names.count else {
                throw StoreError(.permissionFailure, "The server saved \(result.metadata.rows ?? 0) of the \(names.count) records \(names.joined(separator: ", ")): only a record's creator may change it.")
            }
        }
        // The rows these statements hang off are found by zone and name: no statement waits for an ID.
        func records(_ pairs: [(zone: String, name: String)], _ arguments: inout PostgresArguments) -> String {
            "\(arguments.bind(pairs.map(\.zone)))::text[], \(arguments.bind(pairs.map(\.name)))::text[]"
        }
        let updated = saves.filter { !$0.isNew }.map { (zone: $0.zone, name: $0.name) }
        if !updated.isEmpty {
            var clear = PostgresArguments()
            let holders = "SELECT r.id FROM fatchat.record r JOIN unnest(\(records(updated, &clear))) AS u (z, n) ON r.zone = u.z AND r.name = u.n"
            transport.executeLater("DELETE FROM fatchat.reference WHERE holder IN (\(holders))", clear.binds)
            transport.executeLater("DELETE FROM fatchat.asset_use WHERE record IN (\(holders))", clear.binds)
        }
        let links = saves.flatMap { save in save.links.map { (zone: save.zone, name: save.name, link: $0) } }
        if !links.isEmpty {
            var insert = PostgresArguments()
            let holders = records(links.map { ($0.zone, $0.name) }, &insert)
            let sql = """
                INSERT INTO fatchat.reference (holder, zone, target, cascade)
                SELECT r.id, u.z, u.t, u.c FROM unnest(\(holders), \(insert.bind(links.map(\.link.target)))::text[], \(insert.bind(links.map(\.link.cascade)))::boolean[]) AS u (z, n, t, c)
                JOIN fatchat.record r ON r.zone = u.z AND r.name = u.n
                """
            transport.executeLater(sql, insert.binds)
        }
        let uses = saves.flatMap { save in save.hashes.map { (zone: save.zone, name: save.name, hash: $0) } }
        if !uses.isEmpty {
            var insert = PostgresArguments()
            let holders = records(uses.map { ($0.zone, $0.name) }, &insert)
            let sql = """
                INSERT INTO fatchat.asset_use (hash, record)
                SELECT u.h, r.id FROM unnest(\(holders), \(insert.bind(uses.map(\.hash)))::text[]) AS u (z, n, h)
                JOIN fatchat.record r ON r.zone = u.z AND r.name = u.n
                """
            transport.executeLater(sql, insert.binds)
        }
    }

    /// The change-log rows in one INSERT, numbered in the order they were logged.
    private func send(_ changes: [PostgresWriteBuffer.Change]) {
        var arguments = PostgresArguments()
        let sql = """
            INSERT INTO fatchat.change (zone, name, type, kind, previous, at)
            SELECT z, n, t, k::smallint, CASE WHEN hp THEN p END, a
            FROM unnest(\(arguments.bind(changes.map(\.zone)))::text[], \(arguments.bind(changes.map(\.name)))::text[],
                        \(arguments.bind(changes.map(\.type)))::text[], \(arguments.bind(changes.map(\.kind)))::bigint[],
                        \(arguments.bind(changes.map { $0.previous ?? "" }))::text[], \(arguments.bind(changes.map { $0.previous != nil }))::boolean[],
                        \(arguments.bind(changes.map(\.at)))::float8[]) WITH ORDINALITY AS u (z, n, t, k, p, hp, a, o)
            ORDER BY o
            """
        transport.executeLater(sql, arguments.binds)
    }
}
