import Foundation
import PostgresNIO

/// `RecordStorage` on a PostgreSQL server: the public database of a `postgresql` container.
///
/// Reads run in a read-only REPEATABLE READ transaction, so one read sees one
/// snapshot. Writes run in a READ COMMITTED transaction that first takes one
/// advisory lock (`PostgresSchema.writeLock`): writers commit one at a time,
/// so change sequences become visible in order and a reader that has seen
/// sequence N has seen everything before it, as on SQLite. Assets stay in the
/// container directory for now.
final class PostgresStorage: RecordStorage {
    let databaseID: String
    let session: PostgresSession
    let assetsDirectory: URL
    let naming: ContainerNaming
    /// What the storage's transactions read once and keep.
    private let lasting = PostgresAccess.LastingAnswers()

    /// The database's schema version: this build's, unless an older build made it and the role
    /// that opened it may not upgrade it (`upgradeSchema`).
    let schemaVersion: Int

    /// Connects and checks the schema; with `create`, makes it first if the database has none.
    init(endpoint: PostgresEndpoint, assetsDirectory: URL, naming: ContainerNaming, create: Bool = false) throws {
        session = PostgresSession(endpoint: endpoint, naming: naming)
        self.assetsDirectory = assetsDirectory
        self.naming = naming
        (databaseID, schemaVersion) = try session.withLink { link in
            if create { try Self.createSchema(link) }
            let (databaseID, version) = try Self.checkSchema(link, endpoint: endpoint, naming: naming)
            return (databaseID, version < PostgresSchema.version ? try Self.upgradeSchema(link, from: version) : version)
        }
    }

    /// Reads `meta`, refusing a database without Fatchat's schema or with a newer one; returns its ID and schema version.
    private static func checkSchema(_ link: PostgresLink, endpoint: PostgresEndpoint, naming: ContainerNaming) throws -> (databaseID: String, version: Int) {
        guard try hasSchema(link) else {
            throw StoreError(.badContainer, "The database \(endpoint.database) at \(endpoint.place) holds no \(naming.programName) schema; make it with `\(naming.programName) init DIR --postgres '\(endpoint.url)'`.")
        }
        var meta: [String: String] = [:]
        for row in try link.rows("SELECT key, value FROM fatchat.meta") {
            let columns = PostgresColumns(row)
            meta[try columns.text(0, "key")] = try columns.text(1, "value")
        }
        guard let version = meta["schema"].flatMap(Int.init), let databaseID = meta["database_id"] else {
            throw StoreError(.badDatabase, "The schema fatchat in \(endpoint.database) at \(endpoint.place) is damaged: its meta table has no schema version or database ID. It was left untouched.")
        }
        if version > PostgresSchema.version {
            throw StoreError(.incompatibleVersion, "The database \(endpoint.database) was set up by a newer version of \(naming.programName); upgrade this build to use it.")
        }
        return (databaseID, version)
    }

    private static func hasSchema(_ link: PostgresLink) throws -> Bool {
        guard let present = try link.rows("SELECT to_regclass('fatchat.meta') IS NOT NULL").first else { return false }
        return try PostgresColumns(present).bool(0, "present")
    }

    /// Makes the schema in one transaction, unless another process made it first.
    private static func createSchema(_ link: PostgresLink) throws {
        try underWriteLock(link) {
            if try hasSchema(link) { return }
            try run(PostgresSchema.statements(databaseID: UUID().uuidString, now: Date().timeIntervalSince1970), on: link)
        }
    }

    /// Brings a database that an older build made up to this build's schema, in one transaction, and
    /// returns the version it is at then. Only its administrator (`fatchat.is_administrator`) may:
    /// opened by any other role, it stays as it is, and this build sends it what its version
    /// understands, until the administrator's next run upgrades it.
    private static func upgradeSchema(_ link: PostgresLink, from version: Int) throws -> Int {
        try underWriteLock(link) {
            // Another process may have upgraded it since the version was read.
            let now = try link.rows("SELECT value FROM fatchat.meta WHERE key = 'schema'").first.flatMap { Int(try PostgresColumns($0).text(0, "schema")) } ?? version
            guard now < PostgresSchema.version, let admin = try link.rows("SELECT fatchat.is_administrator()").first,
                  try PostgresColumns(admin).bool(0, "administrator") else { return now }
            try run(PostgresSchema.upgrade(from: now), on: link)
            return PostgresSchema.version
        }
    }

    /// Runs `body` in a transaction that holds the write lock, and commits it; a failure rolls it back.
    private static func underWriteLock<T>(_ link: PostgresLink, _ body: () throws -> T) throws -> T {
        try link.execute("BEGIN")
        do {
            try link.execute("SELECT pg_advisory_xact_lock($1)", PostgresSchema.writeLockBinds)
            let result = try body()
            try link.execute("COMMIT")
            return result
        } catch {
            _ = try? link.execute("ROLLBACK")
            throw error
        }
    }

    private static func run(_ statements: [(sql: String, binds: [String])], on link: PostgresLink) throws {
        for statement in statements {
            var binds = PostgresBindings()
            for value in statement.binds { binds.append(value) }
            try link.execute(statement.sql, binds)
        }
    }

    func read<T>(_ body: (any StorageReader) throws -> T) throws -> T {
        try transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", lock: false, body)
    }

    /// A batch saved on a guess that turns out wrong (`PostgresAccess.guessLookUp`) saved nothing, and runs again, looking up.
    func write<T>(_ body: (any StorageWriter) throws -> T) throws -> T {
        do {
            return try transaction("BEGIN ISOLATION LEVEL READ COMMITTED", lock: true, mayGuess: true, body)
        } catch is PostgresLink.GuessFailed {
            return try transaction("BEGIN ISOLATION LEVEL READ COMMITTED", lock: true, body)
        }
    }

    /// Runs `body` in a transaction, with as few waits for the server as is safe.
    ///
    /// BEGIN, and a writer's lock, are sent with the first statement rather than answered on
    /// their own: answers come in order, so they are checked as soon as that statement's answer
    /// is in. Statements whose answers the writer does not need go without waiting
    /// (`executeLater`), and the COMMIT checks them all. That spares this thread a wait per
    /// statement, not the server a round trip: postgres-nio sends a statement only once the one
    /// before it is answered, so a transaction costs a round trip per statement, and only fewer
    /// statements make it shorter. A writer whose only statement is a batch saved on a guess sends
    /// it without BEGIN or COMMIT (`PostgresAccess.sendBufferedWrites`). A reader does not wait for
    /// its COMMIT, and leaves it for the next caller to check (`PostgresSession.withLink`).
    private func transaction<T>(_ begin: String, lock: Bool, mayGuess: Bool = false, _ body: (PostgresAccess) throws -> T) throws -> T {
        try onLink { link in
            if !lock { link.checkLater(link.send(begin)) }
            let access = PostgresAccess(link: link, assets: assetsDirectory, naming: naming, lasting: lasting, schemaVersion: schemaVersion,
                                        begin: lock ? begin : nil, mayGuess: mayGuess)
            do {
                let result = try body(access)
                access.sendBufferedWrites(closing: true)
                if !lock {
                    try link.settle()
                    session.leaveUnsettled(link.send("COMMIT"), on: link)
                } else if access.buffer.began {
                    // A transaction the server aborted answers COMMIT with ROLLBACK: nothing was saved.
                    guard try link.commandTag("COMMIT") != "ROLLBACK" else {
                        throw StoreError(.internalError, "The PostgreSQL server rolled the transaction back instead of committing it; nothing was saved.")
                    }
                } else {
                    // One statement, its own transaction, or none at all.
                    try link.settle()
                }
                return result
            } catch {
                if !PostgresSession.isConnectionLost(error), !lock || access.buffer.began { _ = try? link.execute("ROLLBACK") }
                throw error
            }
        }
    }

    /// The change feed's one statement, sent on its own: no BEGIN to send and no COMMIT for the server
    /// to answer, which a receiver would otherwise pay for on every wake-up.
    func changesWithBounds(after sequence: Int64, zone: String?, limit: Int) throws -> (bounds: ChangeBounds, scan: ChangeScan?) {
        try onLink { link in
            try PostgresAccess(link: link, assets: assetsDirectory, naming: naming, lasting: lasting, schemaVersion: schemaVersion).changesWithBounds(after: sequence, zone: zone, limit: limit)
        }
    }

    /// Runs `body` on the session's connection, with what it throws made a `StoreError`.
    private func onLink<T>(_ body: (PostgresLink) throws -> T) throws -> T {
        do {
            return try session.withLink(body)
        } catch let damage as DamagedRow {
            throw damage.storeError
        } catch let deferred as PostgresLink.DeferredFailure {
            throw deferred.error
        }
    }

    /// A signal fed by `LISTEN fatchat_changes` on the session's connection.
    func makeChangeSignal() throws -> any StorageChangeSignal {
        try PostgresChangeSignal(session: session)
    }

    /// Keys are rows of `fatchat.identity`, read and written on this storage's connection.
    func keyTable() throws -> (any PublishedKeyTable)? { PostgresKeyTable(session: session) }
}
