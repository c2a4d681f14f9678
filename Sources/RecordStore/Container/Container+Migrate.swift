import Foundation
import GRDB

extension Container {
    /// What `migrateToLogs` did.
    public struct Migration: Sendable, Equatable {
        /// Records written to logs, by creator account.
        public var records: [String: Int] = [:]
        /// Rows of the shared file that did not decode or could not be logged, skipped as `admin check` would list them.
        public var skipped = 0
        /// Where the shared file was kept, for a backup.
        public var backup: String?
        /// Subscriptions handed to their owners' log folders, which each of the owner's clients takes into its cache.
        public var subscriptions = 0
    }

    /// Turns a `sqlite` container into a `log` one without losing a record.
    ///
    /// Every record of `public.sqlite` becomes a save in a log of its creator's
    /// own, `logs/_<uid>_<name>/<id>.log`, made by this process and then given to
    /// that account: replay accepts an entry only from a log its account owns,
    /// so no reader has to trust a log that speaks for others. Hence the caller
    /// must be root, or the creator of every record. The write lock on the
    /// shared file is held throughout, so no commit slips in between reading it
    /// and switching `container.json` to `log`, which is done last, by rename.
    /// The shared file is then kept as `public.sqlite.migrated`. A run cut short
    /// leaves a `sqlite` container that works as before; the logs it wrote have
    /// names derived from the container and the account, so running it again
    /// replaces them instead of adding copies.
    ///
    /// `progress` hears each step in words; `written` hears, after each account's log, how many
    /// records are in logs so far and how many there are in all.
    public static func migrateToLogs(at url: URL, naming: ContainerNaming = ContainerNaming(),
                                     progress: (String) -> Void = { _ in },
                                     written: (_ account: String, _ done: Int, _ total: Int) -> Void = { _, _, _ in }) throws -> Migration {
        try migrateToLogs(at: url, naming: naming, accountsPerPass: accountsPerPass, bytesHeld: PendingLog.bytesHeld,
                          progress: progress, written: written)
    }

    /// `migrateToLogs`, writing `accountsPerPass` accounts' logs in each pass over the file, and each log
    /// whenever `bytesHeld` of it wait in memory.
    static func migrateToLogs(at url: URL, naming: ContainerNaming, accountsPerPass: Int, bytesHeld: Int,
                              progress: (String) -> Void,
                              written: (_ account: String, _ done: Int, _ total: Int) -> Void) throws -> Migration {
        let directory = try DirectoryHandle(path: url.path, followingLink: true, naming: naming)
        guard var descriptor = try ContainerDescriptor.read(in: directory, naming: naming) else {
            throw StoreError(.badContainer, "\(url.path) is not a \(naming.programName) container (it has no \(ContainerDescriptor.fileName)).")
        }
        guard (descriptor.engine ?? .sqlite) == .sqlite else {
            throw StoreError(.invalidArguments, "\(url.path) uses the log engine already; there is nothing to migrate.")
        }
        guard try directory.status(ContainerDirectory.databaseName) != nil else {
            throw StoreError(.badContainer, "\(url.path) has no \(ContainerDirectory.databaseName) to migrate; put it back from a backup.")
        }
        let assets = url.appendingPathComponent(ContainerDirectory.assetsName, isDirectory: true)
        let storage = try SQLiteStorage(path: directory.path(of: ContainerDirectory.databaseName), assetsDirectory: assets,
                                        mode: descriptor.mode, naming: naming)
        let filesystem = Filesystem.detect(for: url)
        let network = filesystem.isNetwork
        var migration = Migration()
        progress("Holding the write lock on \(storage.path) while it is read.")
        try storage.write { writer in
            guard let access = writer as? SQLiteAccess else {
                throw StoreError(.internalError, "The shared file handed out a writer this migration does not know.")
            }
            let accounts = try creators(access.db)
            let subscriptions = try readSubscriptions(access)
            let me = geteuid()
            let others = Set(accounts).union(subscriptions.keys).filter { LogDirectory.uid(inAccount: $0) != me }.sorted()
            if me != 0, !others.isEmpty {
                throw StoreError(.permissionFailure, "Records or subscriptions in \(url.path) belong to \(others.count) other account\(others.count == 1 ? "" : "s") (\(others.prefix(3).joined(separator: ", "))), and each must go into a folder that account owns. Run the migration as root.")
            }
            let hadLogs = try directory.status(LogDirectory.name) != nil
            let logs = try LogDirectory.open(in: directory, filesystem: filesystem.kind)
            // Made by root for a container someone else owns: theirs, as if their first client had made it.
            if !hadLogs, me == 0 {
                let owner = try directory.status().st_uid
                if owner != 0, fchown(logs.fd, owner, gid_t.max) != 0, !network {
                    throw StoreError(.permissionFailure, "Cannot give \(logs.path) to the container's owner: \(DirectoryHandle.reason(errno)).")
                }
            }
            let total = try Int.fetchOne(access.db, sql: "SELECT count(*) FROM record") ?? 0
            var done = 0
            // A pass over the file for each batch of accounts, so that however many there are, only
            // a batch's files are open at once.
            for start in stride(from: 0, to: accounts.count, by: accountsPerPass) {
                let batch = Set(accounts[start..<min(start + accountsPerPass, accounts.count)])
                var pending: [String: PendingLog] = [:]
                defer { for log in pending.values { log.discard() } }
                try readRecords(access.db, of: batch) { entry in
                    if pending[entry.account] == nil {
                        pending[entry.account] = try PendingLog(account: entry.account, in: logs, container: descriptor.identifier,
                                                                network: network, bytesHeld: bytesHeld)
                    }
                    try pending[entry.account]?.append(entry)
                }
                // An account none of whose records a log could hold gets no log, as before the logs were streamed.
                for (account, log) in pending.sorted(by: { $0.key < $1.key }) where log.count > 0 {
                    try log.finish()
                    migration.records[account] = log.count
                    done += log.count
                    written(account, done, total)
                }
            }
            migration.skipped = total - done
            for (account, stored) in subscriptions.sorted(by: { $0.key < $1.key }) {
                try writeSubscriptions(stored, account: account, in: logs, network: network)
                migration.subscriptions += stored.count
            }
            descriptor.engine = .log
            try switchDescriptor(descriptor, in: directory)
            progress("\(ContainerDescriptor.fileName) now says the log engine.")
        }
        migration.backup = try keepSharedFile(in: directory, progress: progress)
        return migration
    }

    /// Renames the old shared file (and its journals) to `public.sqlite.migrated` once its container uses
    /// another engine; returns that path, or nil when an earlier run kept one already.
    static func keepSharedFile(in directory: DirectoryHandle, progress: (String) -> Void) throws -> String? {
        let backup = ContainerDirectory.databaseName + ".migrated"
        guard try directory.status(backup) == nil else { return nil }
        for suffix in ["", "-wal", "-shm", "-journal"] where try directory.status(ContainerDirectory.databaseName + suffix) != nil {
            try directory.rename(ContainerDirectory.databaseName + suffix, to: backup + suffix)
        }
        progress("Kept the old shared file as \(directory.path(of: backup)).")
        return directory.path(of: backup)
    }

    /// How many accounts' logs one pass over the shared file writes.
    static let accountsPerPass = 200

    /// The accounts that created records in the default zone, sorted; a creator that names no account is left out.
    private static func creators(_ db: GRDB.Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT DISTINCT creator FROM record WHERE zone = ? AND typeof(creator) = 'text'",
                            arguments: [ZoneID.defaultZoneName])
            .filter { LogDirectory.uid(inAccount: $0) != nil }.sorted()
    }

    /// Hands `body` each record of the shared file that one of `accounts` created, as a save by its creator,
    /// in the order the records were last changed. A row that does not decode, or that no log could hold, is passed over.
    private static func readRecords(_ db: GRDB.Database, of accounts: Set<String>, _ body: (LogEntry) throws -> Void) throws {
        let rows = try Row.fetchCursor(db, sql: "SELECT zone, name, type, fields, created, modified, creator, tag FROM record ORDER BY modified, id")
        while let row = try rows.next() {
            // The public database has the default zone only, and replay reads no other.
            guard let creator = String.fromDatabaseValue(row[6]), accounts.contains(creator),
                  let zone = String.fromDatabaseValue(row[0]), zone == ZoneID.defaultZoneName, let name = String.fromDatabaseValue(row[1]),
                  let type = String.fromDatabaseValue(row[2]), let fields = String.fromDatabaseValue(row[3]),
                  let created = Double.fromDatabaseValue(row[4]), created.isFinite,
                  let modified = Double.fromDatabaseValue(row[5]), modified.isFinite, modified >= 0,
                  let tag = String.fromDatabaseValue(row[7]) else { continue }
            // A record's stamp is when it was last changed, so the creator's later edits, made with a
            // clock at today's time, come after it in every client's order.
            let time = HybridTime(milliseconds: UInt64(modified * 1000), counter: 0)
            try body(LogEntry(account: creator, client: UUID(), time: time,
                              recordID: RecordID(recordName: name, zoneID: ZoneID(zoneName: zone)),
                              change: .save(LogEntry.Saved(recordType: type, fields: fields, created: created,
                                                           modified: modified, changeTag: tag))))
        }
    }

    /// Every subscription of the shared file that decodes, by owner account; the log engine keeps them in each client's cache.
    private static func readSubscriptions(_ access: SQLiteAccess) throws -> [String: [MigratedSubscription]] {
        var byAccount: [String: [MigratedSubscription]] = [:]
        for owner in try String.fetchAll(access.db, sql: "SELECT DISTINCT owner FROM subscription WHERE typeof(owner) = 'text'")
        where LogDirectory.uid(inAccount: owner) != nil {
            for stored in try access.subscriptionBodies(owner: owner)
            where (try? Subscription(storedID: stored.id, body: stored.body, owner: owner)) != nil {
                byAccount[owner, default: []].append(MigratedSubscription(id: stored.id, body: stored.body))
            }
        }
        return byAccount
    }

    /// Writes an account's subscriptions into its log folder, as `MigratedSubscription.fileName`.
    private static func writeSubscriptions(_ subscriptions: [MigratedSubscription], account: String, in logs: DirectoryHandle, network: Bool) throws {
        guard let uid = LogDirectory.uid(inAccount: account) else { return }
        let folder = try accountFolder(account, uid: uid, in: logs, network: network)
        try writeWhole(Array(try JSONEncoder().encode(subscriptions)), named: MigratedSubscription.fileName, in: folder, uid: uid, network: network)
    }

    /// An account's folder in `logs/`, made and given to the account if it has none.
    private static func accountFolder(_ account: String, uid: uid_t, in logs: DirectoryHandle, network: Bool) throws -> DirectoryHandle {
        guard try logs.status(account) != nil else {
            let mode = S_ISGID | 0o700 | (try logs.status().st_mode & 0o055)
            let folder = try logs.makeDirectory(account, mode: mode, group: nil)
            try give(folder.fd, folder.path, to: uid, network: network)
            return folder
        }
        let folder = try logs.directory(account)
        let owner = try folder.status().st_uid
        guard owner == uid || network else {
            throw StoreError(.badContainer, "\(folder.path) belongs to uid \(owner), not to the account its name gives; move it away and run the migration again.")
        }
        return folder
    }

    /// One account's log as it is written: a temporary file in the account's folder, with what waits to be appended
    /// to it, renamed into place once the pass is over. Its client ID is the same every run, so a second run replaces the first's log.
    private final class PendingLog {
        let uid: uid_t
        let folder: DirectoryHandle
        let name: String
        let temporary: String
        let fd: Int32
        let client: UUID
        let network: Bool
        private var buffer: [UInt8]
        private(set) var count = 0
        private var open = true

        /// How much of a log waits in memory before it is written, by default.
        static let bytesHeld = 1 << 16
        private let bytesHeld: Int

        init(account: String, in logs: DirectoryHandle, container: String, network: Bool, bytesHeld: Int) throws {
            guard let uid = LogDirectory.uid(inAccount: account) else {
                throw StoreError(.internalError, "'\(account)' names no account to write a log for.")
            }
            self.uid = uid
            self.network = network
            self.bytesHeld = bytesHeld
            folder = try accountFolder(account, uid: uid, in: logs, network: network)
            client = migrationClient(container: container, account: account)
            name = LogDirectory.fileName(for: client)
            (temporary, fd) = try createTemporary(for: name, in: folder)
            buffer = LogFormat.encode(LogHeader(client: client, account: account, generation: 0))
        }

        /// Adds a save to the log, stamped with the log's client; one no log could hold is passed over.
        func append(_ entry: LogEntry) throws {
            var stamped = entry
            stamped.client = client
            guard (try? LogFormat.encode(stamped, into: &buffer)) != nil else { return }
            count += 1
            if buffer.count >= bytesHeld { try flush() }
        }

        private func flush() throws {
            try writeAll(buffer, to: fd, naming: folder.path(of: temporary))
            buffer.removeAll(keepingCapacity: true)
        }

        /// Writes the rest, makes the file durable, gives it to the account and renames it into place.
        func finish() throws {
            try flush()
            // From here the descriptor is closed and the temporary file renamed or removed, whatever happens.
            open = false
            try finishTemporary(fd, temporary, as: name, in: folder, uid: uid, network: network)
        }

        /// Closes and removes the temporary file of a log that was not finished.
        func discard() {
            guard open else { return }
            close(fd)
            folder.remove(temporary)
            open = false
        }
    }

    /// Writes `bytes` under a temporary name in `folder`, makes them durable, gives the file to `uid`, and renames it to `name`.
    private static func writeWhole(_ bytes: [UInt8], named name: String, in folder: DirectoryHandle, uid: uid_t, network: Bool) throws {
        let (temporary, fd) = try createTemporary(for: name, in: folder)
        do {
            try writeAll(bytes, to: fd, naming: folder.path(of: temporary))
        } catch {
            close(fd)
            folder.remove(temporary)
            throw error
        }
        try finishTemporary(fd, temporary, as: name, in: folder, uid: uid, network: network)
    }

    /// A new file beside `name` in `folder`, under a name of its own, and its descriptor.
    private static func createTemporary(for name: String, in folder: DirectoryHandle) throws -> (name: String, fd: Int32) {
        let temporary = ".\(name).\(UUID().uuidString)"
        let mode = (try folder.status().st_mode & 0o644) | 0o200
        return (temporary, try folder.createFile(temporary, mode: mode, group: nil))
    }

    /// Writes all of `bytes` to `fd`, which `path` names in errors.
    private static func writeAll(_ bytes: [UInt8], to fd: Int32, naming path: String) throws {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress.map { $0 + written }, bytes.count - written) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw StoreError(.serviceUnavailable, "Cannot write \(path): \(DirectoryHandle.reason(errno)).") }
            written += count
        }
    }

    /// Makes the temporary file durable, gives it to `uid`, closes it and renames it to `name`; on failure removes it.
    private static func finishTemporary(_ fd: Int32, _ temporary: String, as name: String, in folder: DirectoryHandle, uid: uid_t, network: Bool) throws {
        defer { folder.remove(temporary) }
        do {
            defer { close(fd) }
            guard fsync(fd) == 0 else { throw StoreError(.serviceUnavailable, "Cannot make \(folder.path(of: temporary)) durable: \(DirectoryHandle.reason(errno)).") }
            try give(fd, folder.path(of: temporary), to: uid, network: network)
        }
        try folder.rename(temporary, to: name)
    }

    /// Makes `uid` the owner of what this process made; a network filesystem that keeps no owners may refuse, which is harmless there.
    private static func give(_ fd: Int32, _ path: String, to uid: uid_t, network: Bool) throws {
        guard uid != geteuid() else { return }
        if fchown(fd, uid, gid_t.max) != 0, !network {
            throw StoreError(.permissionFailure, "Cannot give \(path) to uid \(uid): \(DirectoryHandle.reason(errno)).")
        }
    }

    /// The client ID of an account's migration log: the same for one container and account every run, so a second run replaces the first's log.
    static func migrationClient(container: String, account: String) -> UUID {
        var hash = SHA256()
        hash.update(Array("migrate-to-logs\u{0}\(container)\u{0}\(account)".utf8))
        let hex = Array(hash.finalize())
        let text = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
        return UUID(uuidString: text) ?? UUID()
    }

    /// Replaces `container.json` in one rename, so a reader sees the old descriptor or the new one, never half of either.
    static func switchDescriptor(_ descriptor: ContainerDescriptor, in directory: DirectoryHandle) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(descriptor)
        let old = try directory.status(ContainerDescriptor.fileName)
        let temporary = ".\(ContainerDescriptor.fileName).\(UUID().uuidString)"
        let fd = try directory.createFile(temporary, mode: old.map { $0.st_mode & 0o777 }, group: nil)
        defer { directory.remove(temporary) }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        if let old, geteuid() == 0 { _ = fchown(fd, old.st_uid, old.st_gid) }
        close(fd)
        guard written == data.count, synced else {
            throw StoreError(.serviceUnavailable, "Cannot write \(directory.path(of: temporary)): \(DirectoryHandle.reason(errno)).")
        }
        try directory.rename(temporary, to: ContainerDescriptor.fileName)
    }
}
