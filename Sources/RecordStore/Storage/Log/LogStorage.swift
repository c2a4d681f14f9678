import Foundation
import GRDB
import Synchronization

/// The `log` engine: this client appends its changes to its own log in the
/// container, and reads everyone's logs into a SQLite cache of its own.
///
/// Queries, the change feed and subscriptions are the SQLite engine's,
/// working on the cache in the user's private data directory. Nothing in the
/// container has two writers: `logs/<account>/<client>.log` is written by one
/// process, and no file another account made is ever written.
final class LogStorage: RecordStorage {
    let cache: SQLiteStorage
    let account: String
    let slot: LogClientSlot
    let clock = HybridClock()
    /// This client's log, made on its first write: a client that only reads leaves no file behind.
    private let appenderSlot = Mutex<LogAppender?>(nil)
    private let ownDirectory: DirectoryHandleBox
    private let logFileMode: mode_t
    /// Whether the filesystem reports owners as they are; where it does not (some network
    /// filesystems map every owner to one account), owners are not checked.
    let ownersAreMeaningful: Bool
    /// How long a listing of an account folder stands while the folder's `stat` stays the same (see `relistInterval(on:)`).
    var relistAfter: Duration {
        get { relistSetting.withLock { $0 } }
        set { relistSetting.withLock { $0 = newValue } }
    }
    private let relistSetting: Mutex<Duration>
    /// Whether a log whose `stat` has not changed for `relistAfter` is opened, to refresh the mount's cached `stat`.
    private let opensUnchangedLogs: Bool
    /// Whether each poll's `stat`s ask the filesystem's server rather than the mount's attribute cache (see `status`).
    private let asksServer: Bool
    /// Whether logs are read with O_DIRECT, and one that looks unchanged is read past where the last poll
    /// stopped all the same (see `hasMore`): GlusterFS's client answers even a forced `stat` from a cache.
    private let readsPastSize: Bool
    private let logs: DirectoryHandleBox
    private let historyLimit: Int
    /// What the last poll saw of each log and account directory, to skip what has not changed.
    private let seen = Mutex<PollMemory>(PollMemory())
    /// Whether this process looked for the subscriptions a migration left this account (`MigratedSubscription`).
    private let lookedForMigratedSubscriptions = Mutex(false)

    var databaseID: String { cache.databaseID }

    /// The cache's file in the client's private data directory.
    static let cacheName = "log-cache.sqlite"

    /// Opens the engine for the container in `container`, with its cache and client ID in `privateDirectory`.
    init(container: URL, privateDirectory: URL, assetsDirectory: URL, user: UserIdentity, historyLimit: Int, naming: ContainerNaming) throws {
        account = user.recordID.recordName
        guard LogDirectory.uid(inAccount: account) == user.uid else {
            throw StoreError(.permissionFailure, "The account name \(account) cannot name a log directory; Fatchat's log engine needs a plain user name.")
        }
        let cacheName = Self.cacheName
        let privateHandle = try DirectoryHandle(path: privateDirectory.path, naming: naming)
        if try privateHandle.status(cacheName) == nil {
            try DatabaseFile.create(cacheName, in: privateHandle, mode: 0o600, group: nil)
        }
        cache = try SQLiteStorage(path: privateDirectory.appendingPathComponent(cacheName).path, assetsDirectory: assetsDirectory, mode: .local, naming: naming)
        slot = try LogClientSlot(in: privateDirectory, naming: naming)
        let containerHandle = try DirectoryHandle(path: container.path, followingLink: true, naming: naming)
        let filesystem = Filesystem.detect(for: container)
        let logs = try LogDirectory.open(in: containerHandle, filesystem: filesystem.kind)
        let (own, made) = try LogDirectory.ownDirectory(in: logs, account: account)
        logFileMode = (try own.status().st_mode & 0o644) | 0o200
        // A directory this process just made shows how the filesystem reports owners; one that was
        // there already is trusted to be ours only on a local disk, where owners are what they say.
        let ownedByMe = try own.status().st_uid == geteuid()
        if !ownedByMe, !made, JournalMode.detect(for: container) == .local {
            throw StoreError(.badContainer, "\(own.path) belongs to another account, so someone else could rewrite this client's log. Ask its owner or an administrator to remove it.")
        }
        ownersAreMeaningful = ownedByMe && filesystem.kind.showsOwnersAndModes
        relistSetting = Mutex(Self.relistInterval(on: filesystem.kind))
        // sshfs answers `stat` from a cache it refreshes when the file is opened; GlusterFS's client
        // gave no fresher size after an open (tried), so there an open would only cost a round trip.
        opensUnchangedLogs = filesystem.kind == .sshfs
        asksServer = filesystem.kind == .glusterfs
        readsPastSize = filesystem.kind == .glusterfs
        ownDirectory = DirectoryHandleBox(own)
        self.logs = DirectoryHandleBox(logs)
        self.historyLimit = historyLimit
    }

    func read<T>(_ body: (any StorageReader) throws -> T) throws -> T { try cache.read(body) }

    /// Catches up with the other logs, runs `body` on the cache, appends what it changed to this client's
    /// log and waits for the disk; only then does the cache's transaction commit.
    ///
    /// Once entries are in the log it rings the bell: it touches `logs/`'s times, which wakes the watchers
    /// of every client on this machine (and on this mount) at once, where they would otherwise find the
    /// entries at their next poll. Other machines' clients hear nothing and poll, as before. A quiet
    /// commit (`QuietCommits`) rings nothing and is read at the next poll.
    func write<T>(_ body: (any StorageWriter) throws -> T) throws -> T {
        _ = try refresh()
        var appended = false
        defer { if appended { ringBell() } }
        return try cache.write { writer in
            guard let access = writer as? SQLiteAccess else {
                throw StoreError(.internalError, "The log engine's cache handed out a writer it does not know.")
            }
            let recorder = LogRecordingWriter(base: access, account: account, client: slot.client, clock: clock)
            let result = try body(recorder)
            let entries = recorder.notes.entries
            guard !entries.isEmpty || !recorder.notes.touched.isEmpty else { return result }
            let replay = LogReplay(access)
            if !entries.isEmpty {
                let (log, span) = try withOwnLog { ($0.name, try $0.append(entries)) }
                appended = true
                for entry in entries { _ = try replay.remember(entry) }
                try db(access).execute(sql: "UPDATE log_read SET offset = ? WHERE log = ? AND offset = ?",
                                       arguments: [span.end, account + "/" + log, span.start])
            }
            // The body changed the cache itself; tell the rules which entries it shows, then let them check it.
            var shown: [RecordID: LogStamp] = [:]
            for entry in entries { if case .save = entry.change { shown[entry.recordID] = entry.stamp } else { shown[entry.recordID] = nil } }
            for id in Set(recorder.notes.touched) {
                try db(access).execute(sql: "UPDATE log_entry SET shown = 0 WHERE zone = ? AND name = ?", arguments: [id.zoneID.zoneName, id.recordName])
                if let stamp = shown[id] {
                    try db(access).execute(sql: "UPDATE log_entry SET shown = 1 WHERE zone = ? AND name = ? AND time = ? AND client = ?",
                                           arguments: [id.zoneID.zoneName, id.recordName, Int64(bitPattern: stamp.time.rawValue), stamp.client.uuidString])
                }
            }
            try replay.settle(Set(recorder.notes.touched), historyLimit: historyLimit)
            return result
        }
    }

    private func db(_ access: SQLiteAccess) -> GRDB.Database { access.db }

    /// Touches `logs/`'s times: an attribute change of the folder itself, which `SyncEngine`'s watcher
    /// takes as a commit to read now. Any member may write in `logs/`, so any member may ring; a bell
    /// rung for nothing costs each watcher one poll that finds nothing.
    private func ringBell() {
        guard !QuietCommits.active else { return }
        _ = futimens(logs.handle.fd, nil)
    }

    /// A stamp of `logs/`, which moves when a writer anywhere rings the bell, for a client that looks
    /// between polls where it cannot hear the bell (other machines' and other mounts' writers).
    /// It asks the server where each poll does, and is `nil` when `logs/` cannot be looked at.
    ///
    /// It vouches for "no bell since" at once. A second bell in the clock tick of the first could leave
    /// the folder's times as a look took them, where the filesystem keeps them to a tick (ext4 on Linux 6.18
    /// does not: each touch after a look got a time of its own); that bell's entries are read at the next poll,
    /// late but not lost. Waiting for the times to settle instead would read the logs twice per bell
    /// heard, since a client that hears one reads at once, within the tick.
    ///
    /// An `fstat` of the open folder, not a `stat` of a name in it: on a FUSE mount that keeps no
    /// attributes (bindfs with `attr_timeout=0`), a name costs a round trip to the daemon for the
    /// permission to search the folder before the one for the name's attributes.
    func bellStamp() -> DatabaseFilesStamp? {
        guard let info = asksServer ? try? logs.handle.freshStatus(".") : try? logs.handle.status() else { return nil }
        return DatabaseFilesStamp(files: [info], settledAfter: nil)
    }

    /// Runs `body` with this client's log, opened (and made, the first time) on first use. A failure that
    /// spent the appender lets it go, so the next use opens the log again and reads back what the failed
    /// call really left in it (see `LogAppender.append`). One that did not (an entry too long, a compaction
    /// that found the log other than it expected and left it alone) keeps it: another thread may be appending through it.
    private func withOwnLog<T>(_ body: (LogAppender) throws -> T) throws -> T {
        let appender = try appenderSlot.withLock { slot in
            if let slot { return slot }
            let opened = try openOwnLog()
            slot = opened
            return opened
        }
        do {
            return try body(appender)
        } catch {
            if appender.isSpent { appenderSlot.withLock { if $0 === appender { $0 = nil } } }
            throw error
        }
    }

    private func openOwnLog() throws -> LogAppender {
        let open = { try LogAppender(in: self.ownDirectory.handle, client: self.slot.client, account: self.account,
                                     mode: self.logFileMode, readsDirect: self.readsPastSize) }
        var appender = try open()
        if let latest = appender.latestTime { clock.observe(latest) }
        // The automatic trigger, weighed once per process when the log is opened. After a failed compaction the
        // log is opened again, whichever file its name now holds, and compacted at a later opening.
        if appender.isWorthCompacting {
            do { try appender.compact(in: ownDirectory.handle) } catch { appender = try open() }
        }
        return appender
    }

    /// Compacts this client's own log (see `LogCompaction`); nil if this client has never written one.
    func compactOwnLog() throws -> (before: Int64, after: Int64)? {
        guard try ownDirectory.handle.status(LogDirectory.fileName(for: slot.client)) != nil else { return nil }
        return try withOwnLog { try $0.compact(in: ownDirectory.handle) }
    }

    /// Appends saves of `records` to this client's own log without applying them to its cache:
    /// a benchmark's long log, written at the speed of the disk rather than of the cache.
    func appendUnapplied(_ records: [Record]) throws {
        var entries: [LogEntry] = []
        entries.reserveCapacity(records.count)
        for record in records {
            entries.append(LogEntry(account: account, client: slot.client, time: clock.next(), recordID: record.recordID,
                                    change: .save(try LogReplay.saved(record))))
        }
        _ = try withOwnLog { try $0.append(entries) }
    }

    /// A change signal that polls the logs first: a poll that applied anything is a change.
    func makeChangeSignal() throws -> any StorageChangeSignal { LogChangeSignal(storage: self) }

    // MARK: Polling

    /// The entries one step of a catch-up applies when progress is shown: one transaction, a few seconds.
    static let catchUpStep = 50_000

    /// What one poll did.
    struct PollResult: Sendable {
        /// Entries read and kept that the cache had not seen.
        var newEntries = 0
        /// Records that appeared, changed or went.
        var changedRecords = 0
        /// Whether a log has more to read than this poll took.
        var moreToRead = false
        /// Log bytes this poll read past, and those it saw waiting after where it stopped: a catch-up's progress.
        var bytesRead: Int64 = 0
        var bytesLeft: Int64 = 0
    }

    /// Reads what is new in every log into the cache, in one transaction: one listing of `logs/`,
    /// a stat per account directory and per log, and a read of each log that changed.
    ///
    /// `limit` bounds the entries one poll applies, so that catching up with a long history
    /// goes in steps; call again while `moreToRead`, or call `catchUp`.
    func refresh(limit: Int = 200_000) throws -> PollResult {
        let candidates = try changedLogs()
        guard !candidates.isEmpty else {
            takeMigratedSubscriptions()
            return PollResult()
        }
        var caughtUp: [String: LogEnd] = [:]
        let result = try cache.write { writer in
            let access = try Self.access(writer)
            try access.db.execute(sql: "PRAGMA cache_size = -65536")
            return try poll(candidates, replay: LogReplay(access, polling: true), limit: limit, caughtUp: &caughtUp).result
        }
        remember(caughtUp)
        if !result.moreToRead { takeMigratedSubscriptions() }
        return result
    }

    /// Once per process, after a poll that read every log to its end: the subscriptions a migration left
    /// this account, whose channels the cache now holds. A failure leaves them for the next process:
    /// it must not stop the poll that delivers messages.
    private func takeMigratedSubscriptions() {
        let first = lookedForMigratedSubscriptions.withLock { looked in
            defer { looked = true }
            return !looked
        }
        guard first else { return }
        _ = try? MigratedSubscription.take(from: ownDirectory.handle, account: account, into: cache, ownersAreMeaningful: ownersAreMeaningful)
    }

    /// The entries one transaction of a bulk load applies at most: a catch-up of more goes in several.
    static let bulkEntries = 2_000_000

    /// The page cache of a bulk load: a quarter of the machine's memory, at most 1 GiB, in KiB.
    static var bulkCacheKiB: Int { Int(min(ProcessInfo.processInfo.physicalMemory / 4, 1 << 30) / 1024) }

    /// Reads every log to its end, in steps of `limit` entries (`firstLimit` for the first), telling `step`
    /// what each did; returns the entries applied.
    ///
    /// A catch-up into a cache that holds no entry yet is a bulk load: its steps share one transaction
    /// (up to `bulkEntries`), with a page cache large enough to hold what they write. The tables keyed by
    /// record name (`log_entry`, `record`'s names) take rows at random places; in steps that each
    /// committed, every step rewrote nearly every page of them, and once they outgrew the page cache each
    /// row read its page back, so a million entries cost far more than five times two hundred thousand.
    /// Nothing of a bulk load is committed until it ends: a client killed halfway leaves the cache empty,
    /// and its next start catches up from the beginning. `step` runs inside that transaction.
    func catchUp(firstLimit: Int, limit: Int, step: (PollResult) -> Void) throws -> Int {
        var applied = 0
        var nextLimit = firstLimit
        while true {
            let candidates = try changedLogs()
            guard !candidates.isEmpty else {
                step(PollResult())
                takeMigratedSubscriptions()
                return applied
            }
            var caughtUp: [String: LogEnd] = [:]
            let moreToRead = try cache.write { writer -> Bool in
                let access = try Self.access(writer)
                let bulk = try !(Bool.fetchOne(access.db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM log_entry)")) ?? true)
                try access.db.execute(sql: bulk ? "PRAGMA cache_size = -\(Self.bulkCacheKiB)" : "PRAGMA cache_size = -65536")
                // Steps of one transaction share what they learnt: above all, which records have entries.
                let arrivals = LogReplay.Arrivals(startedEmpty: bulk)
                if bulk { arrivals.heldChanges = HeldChanges(capacity: historyLimit) }
                var pending = candidates
                var inTransaction = 0
                while true {
                    let (result, unfinished) = try poll(pending, replay: LogReplay(access, arrivals: arrivals), limit: nextLimit, caughtUp: &caughtUp)
                    nextLimit = limit
                    applied += result.newEntries
                    inTransaction += result.newEntries
                    step(result)
                    if !result.moreToRead || !bulk || inTransaction >= Self.bulkEntries || unfinished.isEmpty {
                        if let held = arrivals.heldChanges { try access.appendChanges(held, keeping: historyLimit) }
                        // The pages a bulk load cached are let go as soon as it commits.
                        if bulk { try access.db.execute(sql: "PRAGMA cache_size = -65536") }
                        return result.moreToRead
                    }
                    pending = unfinished
                }
            }
            remember(caughtUp)
            if !moreToRead {
                takeMigratedSubscriptions()
                return applied
            }
        }
    }

    private static func access(_ writer: any StorageWriter) throws -> SQLiteAccess {
        guard let access = writer as? SQLiteAccess else {
            throw StoreError(.internalError, "The log engine's cache handed out a writer it does not know.")
        }
        return access
    }

    /// Where a log read to its end stopped, and its `stat` then.
    private struct LogEnd {
        var stamp: FileStamp
        var end: Int64
    }

    /// Notes the logs a committed poll read to their end, so later polls skip them while they stay the same.
    private func remember(_ caughtUp: [String: LogEnd]) {
        seen.withLock { memory in
            for (key, log) in caughtUp {
                memory.logs[key] = log.stamp
                memory.ends[key] = log.end
            }
        }
    }

    /// Reads up to `limit` new entries from `candidates` and applies them; also returns the candidates
    /// that have more to read than this poll took.
    private func poll(_ candidates: [Candidate], replay: LogReplay, limit: Int,
                      caughtUp: inout [String: LogEnd]) throws -> (result: PollResult, unfinished: [Candidate]) {
        var result = PollResult()
        var touched = Touched()
        var unfinished: [Candidate] = []
        for candidate in candidates {
            let budget = limit - result.newEntries
            guard budget > 0 else {
                result.moreToRead = true
                result.bytesLeft += try unread(candidate, db: replay.db)
                unfinished.append(candidate)
                continue
            }
            let read = try readLog(candidate, into: replay, limit: budget, touched: &touched)
            result.newEntries += read.newEntries
            result.bytesRead += read.bytesRead
            result.bytesLeft += max(0, candidate.stamp.size - read.end)
            if read.stop == .limit {
                result.moreToRead = true
                unfinished.append(candidate)
            }
            if read.stop == .caughtUp { caughtUp[candidate.key] = LogEnd(stamp: candidate.stamp, end: read.end) }
        }
        result.changedRecords = try replay.settle(touched.order, historyLimit: historyLimit)
        return (result, unfinished)
    }

    /// A log file as a poll found it.
    private struct Candidate {
        var account: String
        var uid: uid_t
        var client: UUID
        var directory: DirectoryHandleBox
        var stamp: FileStamp
        var key: String { account + "/" + LogDirectory.fileName(for: client) }
    }

    /// How long a listing of an account folder, or a log's `stat`, is trusted while it stays the same.
    ///
    /// A folder's `stat` cannot be trusted to change when a log is made in it on a network
    /// filesystem: sshfs gives whole-second times and a fixed size, and caches them for 20 s, so a
    /// log made in the second of a listing changed nothing a later poll could see, and its
    /// messages never arrived. There every folder is listed again at least once a second, which
    /// bounds how late a new log is seen by the mount's own listing cache; and on sshfs a log whose
    /// `stat` has not changed for that long is opened, since sshfs refreshes a file's cached `stat`
    /// when it is opened (otherwise a message waited up to 20 s). A local disk's nanosecond times
    /// are trusted, with a rare listing as a backstop.
    static func relistInterval(on kind: FilesystemKind) -> Duration {
        kind.isNetwork ? .seconds(1) : .seconds(10)
    }

    /// The logs whose size, inode or time changed since they were last read to their end.
    private func changedLogs() throws -> [Candidate] {
        let logs = self.logs.handle
        var candidates: [Candidate] = []
        let now = ContinuousClock.now
        let relistAfter = self.relistAfter
        for account in try LogDirectory.names(in: logs).sorted() {
            guard let uid = LogDirectory.uid(inAccount: account),
                  let info = try? status(account, in: logs), info.st_mode & S_IFMT == S_IFDIR else { continue }
            // Where owners mean something, a directory in someone else's name is not read at all.
            if ownersAreMeaningful, info.st_uid != uid { continue }
            let directory: DirectoryHandleBox
            let names: [String]
            if let remembered = seen.withLock({ $0.accounts[account] }), remembered.stamp == FileStamp(info),
               now - remembered.listedAt < relistAfter {
                (directory, names) = (remembered.directory, remembered.names)
            } else {
                guard let opened = try? logs.directory(account), let listed = try? LogDirectory.names(in: opened) else { continue }
                directory = DirectoryHandleBox(opened)
                names = listed
                seen.withLock { $0.accounts[account] = PollMemory.Listing(stamp: FileStamp(info), directory: directory, names: names, listedAt: now) }
            }
            for name in names.sorted() {
                guard let client = LogDirectory.client(inFileName: name),
                      let file = try? status(name, in: directory.handle), file.st_mode & S_IFMT == S_IFREG else { continue }
                var candidate = Candidate(account: account, uid: uid, client: client, directory: directory, stamp: FileStamp(file))
                let key = candidate.key
                let (remembered, confirmed) = seen.withLock { ($0.logs[key], $0.confirmed[key]) }
                if remembered == candidate.stamp, opensUnchangedLogs, confirmed.map({ now - $0 >= relistAfter }) ?? true {
                    // An open refreshes the mount's cached `stat` (sshfs's, kept 20 s); the new one shows now or at a later poll.
                    if let fd = try? directory.handle.openRegularFile(name) { close(fd) }
                    seen.withLock { $0.confirmed[key] = now }
                    if let again = try? status(name, in: directory.handle), again.st_mode & S_IFMT == S_IFREG { candidate.stamp = FileStamp(again) }
                }
                if remembered != candidate.stamp || readsPastSize && hasMore(name, in: directory.handle, key: key) {
                    candidates.append(candidate)
                }
            }
        }
        return candidates
    }

    /// Whether a log holds bytes past where the last poll read it to its end, by reading there.
    ///
    /// GlusterFS's client answers `stat`, even a forced one, from attributes it keeps 1 s, so a
    /// new entry went unseen for up to a second. A read with O_DIRECT goes to the server: bytes
    /// past the old end prove there is more, and the poll reads them as it reads any entry,
    /// checking each one, so an answer that is wrong costs a read and nothing else.
    private func hasMore(_ name: String, in directory: DirectoryHandle, key: String) -> Bool {
        guard let end = seen.withLock({ $0.ends[key] }),
              let fd = try? directory.openRegularFile(name, direct: true) else { return false }
        defer { close(fd) }
        guard case .success(let bytes) = LogFileReader.read(fd, at: end, count: 1, direct: true) else { return false }
        return !bytes.isEmpty
    }

    /// A poll's `stat` of a log or an account folder.
    ///
    /// On GlusterFS it asks past the kernel's attribute cache (statx's `AT_STATX_FORCE_SYNC`), which keeps a
    /// log's size and a folder's times 1 s; the glusterfs daemon may still answer from a cache of its own,
    /// which `hasMore` gets past. Elsewhere a plain `stat`: sshfs answers from its own cache anyway (there
    /// `opensUnchangedLogs` helps), and smbnetfs is slow to ask.
    private func status(_ name: String, in directory: DirectoryHandle) throws -> stat? {
        asksServer ? try directory.freshStatus(name) : try directory.status(name)
    }

    /// What reading one log gave.
    private struct LogRead {
        var newEntries = 0
        var stop: LogFileReader.Stop
        var bytesRead: Int64 = 0
        /// Where the next read of this log starts.
        var end: Int64 = 0
    }

    /// The records a poll kept entries of, once each, in the order their first entry arrived.
    private struct Touched {
        var order: [RecordID] = []
        var seen: Set<RecordID> = []
        mutating func insert(_ id: RecordID) { if seen.insert(id).inserted { order.append(id) } }
    }

    /// How many bytes of a log this poll did not get to, by its listed size: only a progress figure.
    private func unread(_ candidate: Candidate, db: GRDB.Database) throws -> Int64 {
        let stored = try Int64.fetchOne(db.cachedStatement(sql: "SELECT offset FROM log_read WHERE log = ?"), arguments: [candidate.key]) ?? 0
        return max(0, candidate.stamp.size - stored)
    }

    /// Reads one log from where the cache last stopped in it, and keeps its entries.
    private func readLog(_ candidate: Candidate, into replay: LogReplay, limit: Int, touched: inout Touched) throws -> LogRead {
        let name = LogDirectory.fileName(for: candidate.client)
        // A mount that refuses O_DIRECT is read through its page cache, as anywhere else.
        var direct = readsPastSize
        var opened = direct ? try? candidate.directory.handle.openRegularFile(name, direct: true) : nil
        if opened == nil {
            direct = false
            opened = try? candidate.directory.handle.openRegularFile(name)
        }
        guard let fd = opened else { return LogRead(stop: .unreadable("cannot open")) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return LogRead(stop: .unreadable("cannot stat")) }
        if ownersAreMeaningful, info.st_uid != candidate.uid { return LogRead(stop: .bad("owned by someone else")) }
        guard case .success(let (header, headerSize)) = LogFileReader.header(of: fd, direct: direct),
              header.account == candidate.account, header.client == candidate.client else {
            return LogRead(stop: .bad("its header is not this log's"))
        }
        let db = replay.db
        let identity = "\(info.st_dev):\(info.st_ino):\(header.generation)"
        var offset = Int64(headerSize)
        if let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT identity, offset FROM log_read WHERE log = ?"), arguments: [candidate.key]),
           String.fromDatabaseValue(row[0]) == identity, let stored = Int64.fromDatabaseValue(row[1]), stored >= offset {
            offset = stored
        }
        // A log replaced by its compacted copy is read again from its start; the history drops what it has seen.
        let scan = LogFileReader.scan(fd, from: offset, limit: limit, direct: direct)
        var read = LogRead(stop: scan.stop, bytesRead: scan.end - offset, end: scan.end)
        var foreign = 0
        for entry in scan.entries {
            guard entry.account == header.account, entry.client == header.client, entry.recordID.zoneID.isDefault else {
                foreign += 1
                continue
            }
            clock.observe(entry.time)
            if try replay.remember(entry) {
                read.newEntries += 1
                touched.insert(entry.recordID)
            }
        }
        try db.cachedStatement(sql: """
            INSERT INTO log_read (log, identity, offset, malformed, foreign_entries) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (log) DO UPDATE SET identity = excluded.identity, offset = excluded.offset,
                malformed = malformed + excluded.malformed, foreign_entries = foreign_entries + excluded.foreign_entries
            """).execute(arguments: [candidate.key, identity, scan.end, scan.malformed, foreign])
        return read
    }
}

/// What a poll remembers between calls.
struct PollMemory {
    /// An account folder as last listed: its `stat` then, the names in it, and when.
    struct Listing {
        var stamp: FileStamp
        var directory: DirectoryHandleBox
        var names: [String]
        var listedAt: ContinuousClock.Instant
    }

    var logs: [String: FileStamp] = [:]
    /// Where each log read to its end stopped, which may be past the size its `stat` gave.
    var ends: [String: Int64] = [:]
    /// When each log unchanged since it was read was last opened to refresh the mount's cached `stat`.
    var confirmed: [String: ContinuousClock.Instant] = [:]
    var accounts: [String: Listing] = [:]
}

/// The parts of a `stat` that change when a file is written or replaced.
struct FileStamp: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Int
    var modifiedNanoseconds: Int

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = info.st_mtim.tv_sec
        modifiedNanoseconds = info.st_mtim.tv_nsec
    }
}

/// A directory handle shared between polls.
///
/// `DirectoryHandle` is immutable after it is made (a path and a descriptor),
/// and every use of it is a system call that takes the descriptor, so sharing
/// it between threads is safe.
final class DirectoryHandleBox: @unchecked Sendable {
    let handle: DirectoryHandle
    init(_ handle: DirectoryHandle) { self.handle = handle }
}

/// Polls the logs, then tells whether the cache's change log moved.
final class LogChangeSignal: StorageChangeSignal {
    private let storage: LogStorage
    private let sequence: SequenceChangeSignal

    init(storage: LogStorage) {
        self.storage = storage
        sequence = SequenceChangeSignal(storage: storage)
    }

    func hasChanged() throws -> Bool {
        _ = try storage.catchUp(firstLimit: 200_000, limit: 200_000) { _ in }
        return try sequence.hasChanged()
    }

    /// Asking is what reads the logs into the cache, so a bell does not spare it.
    var readsWhenAsked: Bool { true }
}
