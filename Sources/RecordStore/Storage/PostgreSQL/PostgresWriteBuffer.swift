import Foundation
import PostgresNIO

/// The saves and change-log rows of a write transaction that are not sent yet.
///
/// A batch goes to the server as two statements, however many records it
/// saves: one INSERT of all its records, then one statement that hangs their
/// references and asset uses off them and logs the changes (and prunes the
/// log). Every statement is a round trip, since postgres-nio sends one only
/// once the one before it is answered, and the writer holds the write lock
/// across them all. The second statement cannot join the first: the
/// row-level-security checks of references and change-log rows read
/// `fatchat.record`, and a statement does not see its own inserts. Every
/// other statement on the connection sends these first
/// (`PostgresAccess.link`), so it sees the writes before it.
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
    /// How many entries the log keeps, once the transaction asked for it to be pruned.
    var keep: Int?

    /// How many saves are held before they go without waiting for another statement: a migration saves
    /// every record of a container in one transaction, and one INSERT of them all would be held in memory whole.
    static let limit = 1000

    var isFull: Bool { saves.count >= Self.limit || changes.count >= Self.limit }

    /// Everything buffered, leaving the buffer empty.
    func take() -> (saves: [Save], changes: [Change], keep: Int?) {
        defer { (saves, changes, keep) = ([], [], nil) }
        return (saves, changes, keep)
    }
}

extension PostgresAccess {
    /// Sends what the buffer holds, without waiting: the COMMIT, or the next statement waited for, checks it.
    func sendBufferedWrites() {
        let (saves, changes, keep) = buffer.take()
        if !saves.isEmpty { send(saves) }
        // The log's newest entries are the statement's own, which its prune cannot see to delete:
        // it prunes only a log that keeps them all, and a separate statement prunes any other.
        let prunesAlong = keep.map { !changes.isEmpty && $0 >= changes.count } ?? false
        if saves.contains(where: { !$0.links.isEmpty || !$0.hashes.isEmpty }) || !changes.isEmpty {
            send(beside: saves, changes, keep: prunesAlong ? keep : nil)
        }
        if let keep, !prunesAlong { transport.executeLater(Prune.self, Prune.binds(keep: keep)) }
    }

    /// The records in one statement, which also drops the references and asset uses of the ones it replaces.
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
        binds.append(saves.map(\.isNew))
        let names = saves.map(\.name)
        transport.executeLater(SaveRecords.self, binds) { saved in
            guard saved.count == names.count else {
                throw StoreError(.permissionFailure, "The server saved \(saved.count) of the \(names.count) records \(names.joined(separator: ", ")): only a record's creator may change it.")
            }
        }
    }

    /// What hangs off the saved records, found by zone and name, and the change-log rows, in one statement.
    private func send(beside saves: [PostgresWriteBuffer.Save], _ changes: [PostgresWriteBuffer.Change], keep: Int?) {
        var binds = PostgresBindings()
        let links = saves.flatMap { save in save.links.map { (zone: save.zone, name: save.name, link: $0) } }
        binds.append(links.map(\.zone))
        binds.append(links.map(\.name))
        binds.append(links.map(\.link.target))
        binds.append(links.map(\.link.cascade))
        let uses = saves.flatMap { save in save.hashes.map { (zone: save.zone, name: save.name, hash: $0) } }
        binds.append(uses.map(\.zone))
        binds.append(uses.map(\.name))
        binds.append(uses.map(\.hash))
        binds.append(changes.map(\.zone))
        binds.append(changes.map(\.name))
        binds.append(changes.map(\.type))
        binds.append(changes.map(\.kind))
        binds.append(changes.map { $0.previous ?? "" })
        binds.append(changes.map { $0.previous != nil })
        binds.append(changes.map(\.at))
        binds.append(keep.map(Int64.init))
        transport.executeLater(SaveBeside.self, binds)
    }

    // The statements every save sends, kept prepared on the connection: the server would
    // otherwise parse and plan each one again at every commit, while the writer holds the lock.

    /// A batch's records in one INSERT, each a new row or an update of its creator's own; a row back for each one saved.
    /// A replaced record's references and asset uses go first; `SaveBeside` puts back the ones it has now.
    private enum SaveRecords: PreparedSQL {
        static let name = "fatchat_save_records"
        static let sql = """
            WITH replaced AS (
                SELECT r.id FROM fatchat.record r JOIN unnest($1::text[], $2::text[], $12::boolean[]) AS u (z, n, isnew)
                ON r.zone = u.z AND r.name = u.n WHERE NOT u.isnew
            ), unlinked AS (
                DELETE FROM fatchat.reference WHERE holder IN (SELECT id FROM replaced)
            ), unused AS (
                DELETE FROM fatchat.asset_use WHERE record IN (SELECT id FROM replaced)
            )
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

    /// A batch's references and asset uses, each hung off its record found by zone and name; its
    /// change-log rows, numbered in the order they were logged; and, when `$15` is not NULL, the
    /// log pruned to its newest `$15` entries.
    private enum SaveBeside: PreparedSQL {
        static let name = "fatchat_save_beside"
        static let sql = """
            WITH linked AS (
                INSERT INTO fatchat.reference (holder, zone, target, cascade)
                SELECT r.id, u.z, u.t, u.c FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[]) AS u (z, n, t, c)
                JOIN fatchat.record r ON r.zone = u.z AND r.name = u.n
            ), used AS (
                INSERT INTO fatchat.asset_use (hash, record)
                SELECT u.h, r.id FROM unnest($5::text[], $6::text[], $7::text[]) AS u (z, n, h)
                JOIN fatchat.record r ON r.zone = u.z AND r.name = u.n
            ), logged AS (
                INSERT INTO fatchat.change (zone, name, type, kind, previous, at)
                SELECT z, n, t, k::smallint, CASE WHEN hp THEN p END, a
                FROM unnest($8::text[], $9::text[], $10::text[], $11::bigint[], $12::text[], $13::boolean[], $14::float8[])
                    WITH ORDINALITY AS u (z, n, t, k, p, hp, a, o)
                ORDER BY o
                RETURNING seq
            ), \(Prune.cut(latest: "(SELECT max(seq) FROM logged)", keep: "$15"))
            """
    }
}
