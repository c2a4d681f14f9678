import Foundation
import PostgresNIO

/// What a write transaction has not sent yet: its BEGIN and write lock, and its saves and change-log rows.
///
/// A batch goes to the server in one call of `fatchat.save_batch` (two statements on a
/// database of schema 1), however many records it saves (`PostgresWriteSQL`). Every statement
/// is a round trip, since postgres-nio sends one only once the one before it is answered, and
/// the writer holds the write lock across them all. BEGIN and the lock go with the first
/// statement that needs them: on schema 2, a commit's look-up takes the lock
/// (`PostgresAccess.lookUp`). On schema 3, a batch that only creates records may skip the look-up
/// (`PostgresAccess.guessLookUp`): `fatchat.save_guessed` then takes the lock and checks the
/// guess, and when it is all the transaction sends, it goes alone, without BEGIN or COMMIT: the
/// whole commit is one round trip. Every other statement on the connection sends all this first
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

    /// What the batch's saves took for granted instead of looking it up.
    struct Guess {
        /// Records that no record stored may be, and references' targets that must all be stored.
        var absent: [RecordID], targets: [RecordID]
        /// The types saved, and the searchable keys that each one's search words were made of.
        var types: [String], searchable: [(type: String, key: String)]
    }

    var saves: [Save] = []
    var changes: [Change] = []
    /// How many entries the log keeps, once the transaction asked for it to be pruned.
    var keep: Int?
    /// Whether the transaction's write lock is still to be taken.
    var lockPending = false
    /// The transaction's BEGIN, until a statement needs it.
    var beginPending: String?
    /// Whether BEGIN went out: the transaction then ends with COMMIT or ROLLBACK.
    var began = false
    /// The guess the saves were made on, checked by the statement that sends them.
    var guess: Guess?

    /// How many saves are held before they go without waiting for another statement: a migration saves
    /// every record of a container in one transaction, and one INSERT of them all would be held in memory whole.
    static let limit = 1000

    var isFull: Bool { saves.count >= Self.limit || changes.count >= Self.limit }

    /// Whether the buffer holds no save, change-log row or prune.
    var isEmpty: Bool { saves.isEmpty && changes.isEmpty && keep == nil }

    /// Everything buffered, leaving the buffer empty. The guess goes only with the saves it was
    /// made for: a statement sent before them (a read, say) leaves it for them.
    func take() -> (saves: [Save], changes: [Change], keep: Int?, guess: Guess?) {
        let guess = saves.isEmpty ? nil : self.guess
        if guess != nil { self.guess = nil }
        defer { (saves, changes, keep) = ([], [], nil) }
        return (saves, changes, keep, guess)
    }
}

extension PostgresAccess {
    /// Sends BEGIN, if it is still pending.
    func sendBegin() {
        guard let begin = buffer.beginPending else { return }
        buffer.beginPending = nil
        buffer.began = true
        transport.checkLater(transport.send(begin))
        // Before the write lock is taken, so that saying it keeps no one else waiting.
        if isQuiet { transport.executeLater("SELECT set_config('fatchat.quiet', 'on', true)") }
    }

    /// Whether this transaction's commit is quiet (`QuietCommits`) where the database can tell its
    /// listeners so (schema 5: `PostgresSchema.notifyChange`); on an older one it notifies as any commit does.
    private var isQuiet: Bool { QuietCommits.active && schemaVersion >= 5 }

    /// Sends BEGIN and the lock, if they are still pending, and what the buffer holds, without
    /// waiting: the COMMIT, or the next statement waited for, checks it. `closing`: nothing follows,
    /// so a batch saved on a guess, if it is all there is, goes without BEGIN (and needs no COMMIT).
    func sendBufferedWrites(closing: Bool = false) {
        let writes = !buffer.isEmpty
        let (saves, changes, keep, guess) = buffer.take()
        // The log's newest entries are the statement's own, which its prune cannot see to delete:
        // it prunes only a log that keeps them all, and a separate statement prunes any other.
        let prunesAlong = keep.map { !changes.isEmpty && $0 >= changes.count } ?? false
        let prunesApart = keep != nil && !prunesAlong
        let hangsOff = saves.contains { !$0.links.isEmpty || !$0.hashes.isEmpty } || !changes.isEmpty
        // `fatchat.save_guessed` takes the lock itself, and then checks the guess.
        let guessed = guess != nil
        // Alone, the guessed save is the whole transaction; a transaction that wrote nothing sends nothing.
        // A quiet one says so after its BEGIN, so its guessed save never goes alone.
        let alone = closing && guessed && !prunesApart && !isQuiet
        if !alone, !closing || writes { sendBegin() }
        if buffer.lockPending, !guessed, buffer.began {
            buffer.lockPending = false
            transport.executeLater("SELECT pg_advisory_xact_lock($1)", PostgresSchema.writeLockBinds)
        }
        if guessed { buffer.lockPending = false }
        let names = saves.map(\.name)
        @Sendable func check(_ saved: Int64) throws {
            guard saved == names.count else {
                throw StoreError(.permissionFailure, "The server saved \(saved) of the \(names.count) records \(names.joined(separator: ", ")): only a record's creator may change it.")
            }
        }
        @Sendable func checkRow(_ rows: [PostgresRow]) throws {
            guard let row = rows.first else { throw StoreError(.internalError, "The server answered a save with no row.") }
            try check(PostgresColumns(row).integer(0, "saved"))
        }
        if let guess {
            var binds = PostgresBindings()
            Self.bindGuess(guess, to: &binds)
            Self.bindRecords(saves, to: &binds)
            Self.bindBeside(saves, changes, keep: prunesAlong ? keep : nil, to: &binds)
            transport.executeLater(SaveGuessed.self, binds, check: checkRow)
        } else if schemaVersion >= 2, !saves.isEmpty || hangsOff {
            var binds = PostgresBindings()
            Self.bindRecords(saves, to: &binds)
            Self.bindBeside(saves, changes, keep: prunesAlong ? keep : nil, to: &binds)
            transport.executeLater(SaveBatch.self, binds, check: checkRow)
        } else {
            if !saves.isEmpty {
                var binds = PostgresBindings()
                Self.bindRecords(saves, to: &binds)
                transport.executeLater(SaveRecords.self, binds) { rows in try check(Int64(rows.count)) }
            }
            if hangsOff {
                var binds = PostgresBindings()
                Self.bindBeside(saves, changes, keep: prunesAlong ? keep : nil, to: &binds)
                transport.executeLater(SaveBeside.self, binds)
            }
        }
        if let keep, prunesApart { transport.executeLater(Prune.self, Prune.binds(keep: keep)) }
    }

    /// The parameters of `PostgresWriteSQL.guessChecks`.
    private static func bindGuess(_ guess: PostgresWriteBuffer.Guess, to binds: inout PostgresBindings) {
        binds.append(guess.absent.map(\.zoneID.zoneName))
        binds.append(guess.absent.map(\.recordName))
        binds.append(guess.targets.map(\.zoneID.zoneName))
        binds.append(guess.targets.map(\.recordName))
        binds.append(guess.types)
        binds.append(guess.searchable.map(\.type))
        binds.append(guess.searchable.map(\.key))
    }

    /// The parameters of `PostgresWriteSQL.records`.
    private static func bindRecords(_ saves: [PostgresWriteBuffer.Save], to binds: inout PostgresBindings) {
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
    }

    /// The parameters of `PostgresWriteSQL.beside`: what hangs off the saves, found by zone and name, and the change-log rows.
    private static func bindBeside(_ saves: [PostgresWriteBuffer.Save], _ changes: [PostgresWriteBuffer.Change], keep: Int?, to binds: inout PostgresBindings) {
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
    }

    // The statements every save sends, kept prepared on the connection: the server would
    // otherwise parse and plan each one again at every commit, while the writer holds the lock.

    /// A batch's saves in one call; the number of records saved back.
    private enum SaveBatch: PreparedSQL {
        static let name = "fatchat_save_batch"
        static let sql = "SELECT fatchat.save_batch(\((1...(PostgresWriteSQL.recordParameters + PostgresWriteSQL.besideParameters)).map { "$\($0)" }.joined(separator: ", ")))"
    }

    /// A batch saved on a guess, which the call checks under the write lock first (schema 3).
    private enum SaveGuessed: PreparedSQL {
        static let name = "fatchat_save_guessed"
        static let sql = "SELECT fatchat.save_guessed(\((1...(PostgresWriteSQL.guessParameters + PostgresWriteSQL.recordParameters + PostgresWriteSQL.besideParameters)).map { "$\($0)" }.joined(separator: ", ")))"
    }

    /// On schema 1, a batch's records; a row back for each one saved.
    private enum SaveRecords: PreparedSQL {
        static let name = "fatchat_save_records"
        static let sql = PostgresWriteSQL.records(returning: true)
    }

    /// On schema 1, what hangs off a batch's records, and its change-log rows.
    private enum SaveBeside: PreparedSQL {
        static let name = "fatchat_save_beside"
        static let sql = PostgresWriteSQL.beside(parametersFrom: 1)
    }
}
