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
        var binds = PostgresBindings()
        binds.append(saves.map(\.zone))
        binds.append(saves.map(\.name))
        binds.append(saves.map(\.type))
        binds.append(saves.map(\.fields))
        binds.append(saves.map(\.created))
        binds.append(saves.map(\.modified))
        binds.append(saves.map(\.creator))
        binds.append(saves.map(\.modifier))
        binds.append(saves.map(\.tag))
        binds.append(saves.map { $0.words ?? "" })
        binds.append(saves.map { $0.words != nil })
        let names = saves.map(\.name)
        transport.executeLater(SaveRecords.self, binds) { saved in
            guard saved.count == names.count else {
                throw StoreError(.permissionFailure, "The server saved \(saved.count) of the \(names.count) records \(names.joined(separator: ", ")): only a record's creator may change it.")
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
            var binds = PostgresBindings()
            binds.append(links.map(\.zone))
            binds.append(links.map(\.name))
            binds.append(links.map(\.link.target))
            binds.append(links.map(\.link.cascade))
            transport.executeLater(SaveReferences.self, binds)
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
        var binds = PostgresBindings()
        binds.append(changes.map(\.zone))
        binds.append(changes.map(\.name))
        binds.append(changes.map(\.type))
        binds.append(changes.map(\.kind))
        binds.append(changes.map { $0.previous ?? "" })
        binds.append(changes.map { $0.previous != nil })
        binds.append(changes.map(\.at))
        transport.executeLater(LogChanges.self, binds)
    }

    // The statements every save sends, kept prepared on the connection: the server would
    // otherwise parse and plan each one again at every commit, while the writer holds the lock.

    /// A batch's records in one INSERT, each a new row or an update of its creator's own; a row back for each one saved.
    private enum SaveRecords: PreparedSQL {
        static let name = "fatchat_save_records"
        static let sql = """
            INSERT INTO fatchat.record (zone, name, type, fields, created, modified, creator, modifier, tag, search)
            SELECT z, n, t, f::jsonb, c, m, cr, mo, tg, CASE WHEN hs THEN array_to_tsvector(string_to_array(s, ' ')) END
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::float8[],
                        $7::text[], $8::text[], $9::text[], $10::text[], $11::boolean[]) AS u (z, n, t, f, c, m, cr, mo, tg, s, hs)
            ON CONFLICT (zone, name) DO UPDATE SET
                type = excluded.type, fields = excluded.fields, modified = excluded.modified,
                modifier = excluded.modifier, tag = excluded.tag, search = excluded.search
            RETURNING 1
            """
    }

    /// A batch's references, each hung off its holder found by zone and name.
    private enum SaveReferences: PreparedSQL {
        static let name = "fatchat_save_references"
        static let sql = """
            INSERT INTO fatchat.reference (holder, zone, target, cascade)
            SELECT r.id, u.z, u.t, u.c FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[]) AS u (z, n, t, c)
            JOIN fatchat.record r ON r.zone = u.z AND r.name = u.n
            """
    }

    /// A batch's change-log rows, numbered in the order they were logged.
    private enum LogChanges: PreparedSQL {
        static let name = "fatchat_log_changes"
        static let sql = """
            INSERT INTO fatchat.change (zone, name, type, kind, previous, at)
            SELECT z, n, t, k::smallint, CASE WHEN hp THEN p END, a
            FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::boolean[], $7::float8[])
                WITH ORDINALITY AS u (z, n, t, k, p, hp, a, o)
            ORDER BY o
            """
    }
}
