import Foundation
import GRDB
import Synchronization

/// `RecordStorage` on one SQLite file.
final class SQLiteStorage: RecordStorage {
    let databaseID: String
    let connections: any SQLiteConnections
    let assetsDirectory: URL
    let path: String
    /// Words this database's errors for the program that opened it.
    let naming: ContainerNaming

    /// Opens the database at `path`, which must exist (it may be empty), in the given mode.
    ///
    /// With `ringing`, each commit in local mode touches that directory's times, so that its watchers wake once per commit.
    init(path: String, assetsDirectory: URL, mode: JournalMode, naming: ContainerNaming, ringing bell: URL? = nil) throws {
        var settings = SQLiteSettings(path: path, naming: naming)
        settings.bell = mode == .local ? bell?.path : nil
        switch mode {
        case .local: connections = try LocalConnections(settings: settings)
        case .network: connections = try NetworkConnections(settings: settings)
        }
        self.assetsDirectory = assetsDirectory
        self.path = path
        self.naming = naming
        databaseID = try connections.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM fatchat_meta WHERE key = 'database_id'") ?? ""
        }
        try connections.read { db in try checkSchema(db) }
    }

    /// The file and `schema_version` whose schema `SchemaCheck` last accepted.
    private let acceptedSchema = Mutex<(file: FileIdentity, version: Int64)?>(nil)

    /// Refuses a schema that RecordStore did not make; checked again whenever SQLite's schema cookie moves or the file is replaced.
    ///
    /// Every write transaction calls this first, with the write lock held, so a
    /// trigger planted while this process runs is refused before any of our
    /// writes could fire it. An unchanged file and cookie cost a `stat` and one pragma read.
    private func checkSchema(_ db: GRDB.Database) throws {
        let version = try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA schema_version")) ?? 0
        let file = try FileIdentity.of(path, naming: naming)
        if acceptedSchema.withLock({ $0?.file == file && $0?.version == version }) { return }
        try SchemaCheck.verify(db, path: path, naming: naming)
        acceptedSchema.withLock { $0 = (file, version) }
    }

    func read<T>(_ body: (any StorageReader) throws -> T) throws -> T {
        try reportingDamage {
            try connections.read { db in try body(SQLiteAccess(db: db, assets: assetsDirectory, naming: naming)) }
        }
    }

    /// The change feed's one statement, outside a transaction where the connections allow it: a
    /// receiver asks this on every wake-up.
    func changesWithBounds(after sequence: Int64, zone: String?, limit: Int) throws -> (bounds: ChangeBounds, scan: ChangeScan?) {
        try reportingDamage {
            try connections.readStatement { db in
                try SQLiteAccess(db: db, assets: assetsDirectory, naming: naming).changesWithBounds(after: sequence, zone: zone, limit: limit)
            }
        }
    }

    func write<T>(_ body: (any StorageWriter) throws -> T) throws -> T {
        try reportingDamage {
            try connections.write { db in
                try checkSchema(db)
                return try body(SQLiteAccess(db: db, assets: assetsDirectory, naming: naming))
            }
        }
    }

    /// Runs `body`; a stored row that would not decode ends it as the store error that names the row.
    private func reportingDamage<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let damage as DamagedRow {
            throw damage.storeError
        }
    }
}
