import Foundation

extension Container {
    /// What `migrateToPostgres` did.
    public struct PostgresMigration: Sendable, Equatable {
        /// Records copied, by creator account.
        public var records: [String: Int] = [:]
        /// Public keys copied, one per account.
        public var keys = 0
        /// Subscriptions copied.
        public var subscriptions = 0
        /// Records of the source that did not decode, left behind in it as `admin check` lists them.
        public var skipped = 0
        /// Where the old shared file was kept (a `sqlite` container); a `log` container keeps its `logs/` as they are.
        public var backup: String?
    }

    /// The `meta` key that names the container a database was filled from, so that a run cut short can be run again.
    static let migratedFromKey = "migrated_from"
    /// The `meta` key that holds the change sequence the copy ended at: a newer one means clients used the server since.
    static let migratedThroughKey = "migrated_through"

    /// Copies the public database of a `sqlite` or `log` container to an empty PostgreSQL database and
    /// switches the container to it, losing nothing.
    ///
    /// Every record keeps its name, type, fields, creator, last modifier, dates and change tag; so do
    /// its references and assets (their content goes to the server); each account's public key and
    /// subscriptions go along, so signed records still verify. Row-level security takes a row's owner
    /// from `current_user`, so the copy must run as the administrator (the role that owns the schema,
    /// or a superuser), which is above those rules: in its one transaction it sets `fatchat.migrating`,
    /// and the server's triggers then give each row to the role its account names (`_<uid>_<role>`).
    ///
    /// The copy is one transaction: a run cut short leaves the database as it was. A database that
    /// holds anything is refused, unless it holds an earlier, unfinished copy of this same container,
    /// which is replaced. A `sqlite` container's write lock is held from the first read until
    /// `container.json` names the server, so no commit is missed; its file is then kept as
    /// `public.sqlite.migrated`. A `log` container has no such lock: its logs are read again after the
    /// copy, and copied again if anything came in meanwhile.
    public static func migrateToPostgres(at url: URL, to serverURL: String, naming: ContainerNaming = ContainerNaming(),
                                         progress: (String) -> Void = { _ in },
                                         copied: (_ done: Int, _ total: Int) -> Void = { _, _ in }) throws -> PostgresMigration {
        try migrateToPostgres(at: url, to: serverURL, naming: naming, recordsPerPage: migrationPage, progress: progress, copied: copied)
    }

    /// `migrateToPostgres`, reading `recordsPerPage` records before each wait for the server.
    static func migrateToPostgres(at url: URL, to serverURL: String, naming: ContainerNaming, recordsPerPage: Int,
                                  progress: (String) -> Void, copied: (_ done: Int, _ total: Int) -> Void) throws -> PostgresMigration {
        let endpoint = try PostgresEndpoint(url: serverURL)
        let directory = try DirectoryHandle(path: url.path, followingLink: true, naming: naming)
        guard var descriptor = try ContainerDescriptor.read(in: directory, naming: naming) else {
            throw StoreError(.badContainer, "\(url.path) is not a \(naming.programName) container (it has no \(ContainerDescriptor.fileName)).")
        }
        let engine = descriptor.engine ?? .sqlite
        guard engine != .postgresql else {
            throw StoreError(.invalidArguments, "\(url.path) keeps its public database on PostgreSQL already (\(descriptor.postgresURL ?? "no URL")); there is nothing to migrate.")
        }
        var options = Options(create: false, naming: naming)
        options.mode = descriptor.mode
        let container = try Container(url: url, options: options)
        let source = try (container.publicDatabase.storage as? LazyStorage)?.storage() ?? container.publicDatabase.storage
        let keys = KeyDirectory(container: url, engine: engine, naming: naming)
        let assets = url.appendingPathComponent(ContainerDirectory.assetsName, isDirectory: true)
        progress("Connecting to \(endpoint.database) at \(endpoint.place) as \(endpoint.user).")
        let target: PostgresStorage
        do {
            target = try PostgresStorage(endpoint: endpoint, assetsDirectory: assets, naming: naming, create: true)
        } catch let error as StoreError {
            throw StoreError(error.code, "Nothing was migrated: \(error.message)")
        }
        func copy(_ reader: any StorageReader) throws -> PostgresMigration {
            try target.write { writer in
                guard let access = writer as? PostgresAccess else {
                    throw StoreError(.internalError, "The server handed out a writer this migration does not know.")
                }
                return try copyPublicDatabase(from: reader, keys: keys, into: access, container: descriptor.identifier,
                                              endpoint: endpoint, recordsPerPage: recordsPerPage, copied: copied)
            }
        }
        var migration: PostgresMigration
        if engine == .sqlite {
            progress("Holding the write lock on \(url.path)/\(ContainerDirectory.databaseName) while it is copied.")
            migration = try source.write { writer in
                let migration = try copy(writer)
                try switchToServer(&descriptor, endpoint: endpoint, in: directory)
                return migration
            }
            migration.backup = try keepSharedFile(in: directory, progress: progress)
        } else {
            progress("Reading every log of \(url.path).")
            try container.refreshPublicDatabase()
            var attempts = 0
            while true {
                migration = try source.read(copy)
                attempts += 1
                // What a client appended while the copy ran is copied too; clients that never stop are refused.
                guard try container.refreshPublicDatabase() > 0 else { break }
                guard attempts < 3 else {
                    throw StoreError(.zoneBusy, "Clients kept writing to \(url.path) during the migration, and container.json still names the log engine. Stop every client and run it again.")
                }
                progress("Entries came in while copying; copying again.")
            }
            try switchToServer(&descriptor, endpoint: endpoint, in: directory)
        }
        progress("\(ContainerDescriptor.fileName) now names the postgresql engine at \(endpoint.url).")
        return migration
    }

    /// Points `container.json` at the server.
    private static func switchToServer(_ descriptor: inout ContainerDescriptor, endpoint: PostgresEndpoint, in directory: DirectoryHandle) throws {
        descriptor.engine = .postgresql
        descriptor.postgresURL = endpoint.url
        try switchDescriptor(descriptor, in: directory)
    }

    /// How many records the copy reads before it waits for the server to have taken the batches it sent.
    static let migrationPage = 10_000

    /// The copy itself, inside the server's transaction: checks, field marks, records with their change entries, keys, subscriptions.
    private static func copyPublicDatabase(from source: any StorageReader, keys: KeyDirectory, into target: PostgresAccess, container: String,
                                           endpoint: PostgresEndpoint, recordsPerPage: Int, copied: (Int, Int) -> Void) throws -> PostgresMigration {
        let link = target.link
        guard let row = try link.rows("SELECT fatchat.is_administrator(), to_regproc('fatchat.writer_of') IS NOT NULL").first else {
            throw StoreError(.internalError, "The server did not say who may migrate.")
        }
        let columns = PostgresColumns(row)
        guard try columns.bool(1, "writer_of") else {
            throw StoreError(.incompatibleVersion, "The schema fatchat in \(endpoint.database) at \(endpoint.place) was made by an earlier build that cannot take a migration; drop it (DROP SCHEMA fatchat CASCADE) or use another database.")
        }
        guard try columns.bool(0, "is_administrator") else {
            throw StoreError(.permissionFailure, "The role \(endpoint.user) does not own the schema fatchat in \(endpoint.database), and only its owner (or a superuser) may write records in other members' names. Run the migration as the role that made it, or into a database where your role may make the schema.")
        }
        try clearEarlierCopy(on: link, container: container, endpoint: endpoint)
        _ = try link.rows("SELECT set_config('fatchat.migrating', 'on', true)")

        var migration = PostgresMigration()
        let summaries = try source.recordTypeSummary()
        for summary in summaries {
            for (key, options) in try source.fieldMarks(recordType: summary.recordType) where !options.isEmpty {
                try target.setFieldMark(options, key: key, recordType: summary.recordType)
            }
        }
        let zones = try source.zoneNames()
        for zone in zones where zone != ZoneID.defaultZoneName {
            throw StoreError(.invalidArguments, "The public database has a zone '\(zone)' besides the default one, which the server does not keep; nothing was migrated.")
        }
        var accounts = Set(keys.fileAccounts())
        let total = summaries.reduce(0) { $0 + $1.count }
        var read = 0
        // The names a page at a time, and the server's answers waited for every few pages: what
        // is held in memory stays the same whatever the size of the container.
        var after: Int64 = 0
        while case let page = try source.recordIDs(inZone: ZoneID.defaultZoneName, afterRow: after, limit: recordsPerPage), let last = page.lastRow {
            after = last
            for id in page.ids {
                read += 1
                if read % 200 == 0 { copied(read, max(read, total)) }
                let record: Record?
                do {
                    record = try source.record(id, keys: nil)
                } catch is DamagedRow {
                    migration.skipped += 1
                    continue
                }
                guard let record else { continue }
                guard let creator = record.creatorUserRecordID?.recordName, LogDirectory.uid(inAccount: creator) != nil else {
                    migration.skipped += 1
                    continue
                }
                try target.upsert(record, isNew: true)
                try target.appendChange(id, type: record.recordType, kind: .created, previousFields: nil, date: record.modificationDate ?? Date())
                migration.records[creator, default: 0] += 1
                accounts.insert(creator)
            }
            try link.settle()
        }
        copied(read, max(read, total))
        for account in accounts.sorted() {
            if let key = keys.key(of: account) {
                try PostgresKeyTable.publish(account: account, text: Data(key.encoded.utf8), on: target.link)
                migration.keys += 1
            }
            for stored in try source.subscriptionBodies(owner: account) {
                guard let subscription = try? Subscription(storedID: stored.id, body: stored.body, owner: account) else { continue }
                try target.saveSubscription(id: stored.id, owner: account, body: stored.body, parent: subscription.parent)
                migration.subscriptions += 1
            }
        }
        var mark = PostgresArguments()
        let through = String(try target.latestSequence())
        try target.link.execute("INSERT INTO fatchat.meta (key, value) VALUES (\(mark.bind(migratedFromKey)), \(mark.bind(container))), (\(mark.bind(migratedThroughKey)), \(mark.bind(through)))", mark.binds)
        return migration
    }

    /// Refuses a database that holds anything but an earlier, unfinished copy of this container, and removes such a copy.
    private static func clearEarlierCopy(on link: PostgresLink, container: String, endpoint: PostgresEndpoint) throws {
        var arguments = PostgresArguments()
        let sql = """
            SELECT (SELECT value FROM fatchat.meta WHERE key = \(arguments.bind(migratedFromKey))),
                   (SELECT count(*) FROM fatchat.record), (SELECT count(*) FROM fatchat.identity), (SELECT count(*) FROM fatchat.subscription),
                   (SELECT value FROM fatchat.meta WHERE key = \(arguments.bind(migratedThroughKey))), (SELECT coalesce(max(seq), 0) FROM fatchat.change)
            """
        guard let row = try link.rows(sql, arguments.binds).first else { return }
        let columns = PostgresColumns(row)
        let from = columns.isNull(0) ? nil : try columns.text(0, "migrated_from")
        let counts = [try columns.integer(1, "records"), try columns.integer(2, "keys"), try columns.integer(3, "subscriptions")]
        if from == nil, counts.allSatisfy({ $0 == 0 }) { return }
        guard from == container else {
            let what = from.map { "a copy of another container (\($0))" } ?? "\(counts[0]) records, \(counts[1]) keys and \(counts[2]) subscriptions"
            throw StoreError(.invalidArguments, "The database \(endpoint.database) at \(endpoint.place) already holds \(what); a migration goes into an empty database only, so nothing was changed. Use a new database, or drop the schema fatchat there first.")
        }
        // This container's own earlier copy, whose run ended before container.json was switched, is made again from the
        // source; but not once a client has written to the server since, which would lose what it wrote.
        let through = columns.isNull(4) ? nil : try columns.text(4, "migrated_through")
        guard through == String(try columns.integer(5, "latest")) else {
            throw StoreError(.invalidArguments, "The database \(endpoint.database) at \(endpoint.place) holds a copy of this container that clients have written to since; running the migration again would lose what they wrote, so nothing was changed. Point container.json at the server again (\(endpoint.url)), or drop the schema fatchat there to start over.")
        }
        for table in ["record", "change", "identity", "subscription", "asset", "meta"] {
            var clear = PostgresArguments()
            let condition = table == "meta" ? " WHERE key IN (\(clear.bind(migratedFromKey)), \(clear.bind(migratedThroughKey)))" : ""
            try link.execute("DELETE FROM fatchat.\(table)\(condition)", clear.binds)
        }
    }
}
