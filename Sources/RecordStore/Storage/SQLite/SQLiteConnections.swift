import Foundation
import GRDB
import Synchronization

/// How a database file is opened: kept open in WAL mode on a local
/// filesystem, or reopened for every transaction on a network filesystem.
protocol SQLiteConnections: Sendable {
    func read<T>(_ body: (GRDB.Database) throws -> T) throws -> T
    func write<T>(_ body: (GRDB.Database) throws -> T) throws -> T
    /// Runs `body`, which reads with a single statement, outside a transaction where the connections
    /// allow it: one statement is a snapshot by itself.
    func readStatement<T>(_ body: (GRDB.Database) throws -> T) throws -> T
}

extension SQLiteConnections {
    func readStatement<T>(_ body: (GRDB.Database) throws -> T) throws -> T { try read(body) }
}

/// Settings shared by both ways of opening.
struct SQLiteSettings: Sendable {
    var path: String
    /// Words the errors for the program that opened the file.
    var naming: ContainerNaming
    /// How long one attempt waits on a lock before the storage retries.
    var busyTimeout: TimeInterval = 5
    /// How long the storage keeps retrying a busy database before `zoneBusy`.
    var busyDeadline: TimeInterval = 120
    /// The directory whose times each commit touches, or `nil` for none: the container's, for its public database on a local filesystem.
    var bell: String? = nil

    /// Tells the directory's watchers that a commit is visible now, by setting the directory's times to now.
    ///
    /// SQLite writes a commit to the WAL in 20 or more `pwrite`s and makes it
    /// visible through the shared-memory index, which raises no inotify event;
    /// so an event from the log file says only that a commit is under way. The
    /// directory's own attribute change is one event, raised after the commit
    /// is visible, and a watcher that has seen one waits for the next instead
    /// of waking at every page (see `ChangeWatcher`). It needs write permission
    /// on the directory, which a member of the container's group has; nothing
    /// is opened, and a failure only leaves the watchers to the log's events.
    ///
    /// A quiet commit (see ``QuietCommits``) rings nothing here: it rang ``ringQuietBell()`` before it began.
    func ringBell() {
        guard let bell, !QuietCommits.active else { return }
        _ = utimensat(AT_FDCWD, bell, nil, 0)
    }

    /// Before a quiet commit, unless a bell rang lately: touches the database file's times, an event
    /// that a watcher tells apart by its name, which renews its trust in bells but fetches nothing.
    ///
    /// It rings first, so that a watcher whose trust had lapsed listens for bells alone by the time
    /// the commit's pages are written, and is not woken by them. (A commit held up for longer than
    /// the trust is then heard as one that rang nothing: read when it is seen.)
    func ringQuietBell() {
        guard let bell, QuietCommits.active, !rangLately(bell) else { return }
        _ = utimensat(AT_FDCWD, path, nil, AT_SYMLINK_NOFOLLOW)
    }

    /// Whether a bell of either kind rang within half the watchers' trust in bells: the newer change
    /// time of the directory and of the database file. Anything else that changed them lately (a file
    /// made in the directory, a checkpoint) makes a quiet commit ring nothing, which at worst leaves
    /// it to be read when the watchers' trust lapses.
    private func rangLately(_ bell: String) -> Bool {
        var directory = stat(), file = stat(), now = timespec()
        guard stat(bell, &directory) == 0, lstat(path, &file) == 0, clock_gettime(CLOCK_REALTIME, &now) == 0 else { return false }
        func seconds(_ time: timespec) -> Double { Double(time.tv_sec) + Double(time.tv_nsec) / 1e9 }
        let newest = max(seconds(directory.st_ctim), seconds(file.st_ctim))
        let age = seconds(now) - newest
        return age >= 0 && age < QuietCommits.watchersTrustBells / 2
    }

    /// The page cache of a connection that writes: room for a batch's pages.
    ///
    /// A batch of 400 messages dirties about a thousand pages (the record, its
    /// indexes, references, the change log and the search index). SQLite's
    /// default of 2 MiB holds 500, so it spilled pages to the log in the middle
    /// of the transaction and read them back: a seed wrote twice the log frames
    /// raw SQLite did, and read more pages back from the log than it wrote. The
    /// cache fills only as pages are used, so a connection that writes one
    /// message costs no more.
    ///
    /// In network mode every connection lives for one transaction, so there
    /// the size holds for reads too, and is given back when the connection closes.
    static let writerCache = "PRAGMA cache_size = -16384"

    /// The page cache of a connection that only reads: 256 KiB, where SQLite's default is 2 MiB.
    ///
    /// A client keeps up to five of them open on the public database (the pool's readers, the
    /// single statements', the feed's), and each kept up to 2 MiB of pages once it had read that
    /// many: a thousand channels' list filled one. Another process's commit empties a reader's cache
    /// anyway, and a page missed here is a `pread` from the kernel's page cache. A newest page of
    /// 50 messages reads fewer pages than this holds.
    static let readerCache = "PRAGMA cache_size = -256"

    /// An SQLite URI for the file; `mode=rw` (or `ro`) so a vanished file is never silently recreated.
    func uri(vfs: String, readOnly: Bool = false) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let escaped = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
        return "file:\(escaped)?mode=\(readOnly ? "ro" : "rw")&vfs=\(vfs)"
    }

    /// Runs `attempt` again while the database is busy, until the deadline.
    ///
    /// `alsoRetry` names other errors that mean "nothing was done, try again".
    /// A shorter ``LockPatience/deadline`` set by the caller ends the wait sooner.
    func retryingBusy<T>(beforeRetry: () -> Void = {}, alsoRetry: (DatabaseError) -> Bool = { _ in false },
                         _ attempt: () throws -> T) throws -> T {
        let start = Date()
        let deadline = min(busyDeadline, LockPatience.deadline ?? busyDeadline)
        let brief = deadline < busyDeadline
        var pause: UInt32 = 1_000
        while true {
            do {
                return try attempt()
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED || alsoRetry(error) {
                if Date().timeIntervalSince(start) > deadline {
                    guard brief else { throw StoreError.from(error, path: path) }
                    throw StoreError(.zoneBusy, "\(path) is locked by another process; try again once it is free.")
                }
                beforeRetry()
                usleep(pause + UInt32.random(in: 0...pause))
                pause = min(pause * 2, 100_000)
            }
        }
    }
}

/// Local mode: one WAL pool for the life of the process.
///
/// Before each transaction it checks that the path still names the file the
/// pool has open. A file that was moved away or unmounted gives
/// `serviceUnavailable`, and the pool is reopened once the file is back.
final class LocalConnections: SQLiteConnections {
    private let settings: SQLiteSettings
    var path: String { settings.path }
    private let state: Mutex<Opened?>

    /// The file the path named when it was opened, and the connections on it.
    private struct Opened {
        var pool: DatabasePool
        var inode: FileIdentity
        /// For `readStatement`, opened at its first use.
        var statements: DatabaseQueue?
    }

    init(settings: SQLiteSettings) throws {
        self.settings = settings
        let (pool, identity) = try Self.open(settings)
        do {
            try Schema.prepare(pool, path: settings.path, naming: settings.naming)
        } catch {
            throw StoreError.translating(error, path: settings.path)
        }
        self.state = Mutex(Opened(pool: pool, inode: identity))
    }

    /// Opens a pool on the file at the path, and tells which file that was.
    ///
    /// SQLite opens by path, following a symlink; the path is looked at
    /// before and after, so that a file swapped in meanwhile is refused
    /// before any transaction runs on it.
    private static func open(_ settings: SQLiteSettings) throws -> (DatabasePool, FileIdentity) {
        var config = Configuration()
        config.busyMode = .timeout(settings.busyTimeout)
        config.journalMode = .wal
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: SQLiteSettings.readerCache)
            SQLFunctions.register(db)
        }
        do {
            // GRDB opens the pool's readers read-only, which a `mode=rw` URI
            // would refuse; so the path is used as is, after checking it exists.
            // Opening the pool writes to the file, so first make sure it is ours.
            return try settings.retryingBusy(alsoRetry: DatabaseFile.isTransientForReaders) {
                let identity = try FileIdentity.of(settings.path, naming: settings.naming)
                _ = try DatabaseFile.inspect(settings.path, naming: settings.naming)
                let pool = try DatabasePool(path: settings.path, configuration: config)
                try pool.writeWithoutTransaction { try $0.execute(sql: SQLiteSettings.writerCache) }
                guard try FileIdentity.of(settings.path, naming: settings.naming) == identity else {
                    throw StoreError(.serviceUnavailable, "\(settings.path) was replaced while it was being opened; try again.")
                }
                return (pool, identity)
            }
        } catch {
            throw StoreError.translating(error, path: settings.path)
        }
    }

    private func currentPool() throws -> DatabasePool {
        try current { $0.pool }
    }

    /// Runs `use` on what is open on the file the path names now, first opening it again if that file changed.
    private func current<T>(_ use: (inout Opened) throws -> T) throws -> T {
        let identity = try FileIdentity.ifPresent(settings.path, naming: settings.naming)
        return try state.withLock { state in
            var opened: Opened
            if let kept = state, kept.inode == identity {
                opened = kept
            } else {
                guard identity != nil else {
                    state = nil
                    throw StoreError(.serviceUnavailable, "\(settings.path) is not there; the container may be unmounted or moved. Changes wait until it is back.")
                }
                let (pool, inode) = try Self.open(settings)
                try Schema.prepare(pool, path: settings.path, naming: settings.naming)
                opened = Opened(pool: pool, inode: inode)
            }
            defer { state = opened }
            return try use(&opened)
        }
    }

    /// The read-only connection for `readStatement`, opened on the file the pool has open.
    ///
    /// Opened by path like the pool, so the path is looked at again after;
    /// a file swapped in meanwhile is refused.
    private func statementReader() throws -> DatabaseQueue {
        try current { opened in
            if let queue = opened.statements { return queue }
            var config = Configuration()
            config.readonly = true
            config.busyMode = .timeout(settings.busyTimeout)
            config.prepareDatabase { db in
                try db.execute(sql: SQLiteSettings.readerCache)
                SQLFunctions.register(db)
            }
            let queue = try DatabaseQueue(path: settings.path, configuration: config)
            guard try FileIdentity.of(settings.path, naming: settings.naming) == opened.inode else {
                throw StoreError(.serviceUnavailable, "\(settings.path) was replaced while it was being opened; try again.")
            }
            opened.statements = queue
            return queue
        }
    }

    func read<T>(_ body: (GRDB.Database) throws -> T) throws -> T {
        try onPool { pool in try pool.read(body) }
    }

    /// A connection of its own, without a transaction around the statement.
    ///
    /// A pool's reader would cost a receiver's every fetch a second read
    /// transaction (GRDB reads `PRAGMA schema_version` before each use, to
    /// know whether its schema cache is stale) and the hand-out of a reader.
    /// A cached statement needs neither: SQLite prepares it again itself
    /// when the schema changed.
    func readStatement<T>(_ body: (GRDB.Database) throws -> T) throws -> T {
        try translating { try settings.retryingBusy { try statementReader().inDatabase(body) } }
    }

    /// Runs `use` on the pool of the file the path names now, retrying while the file is busy.
    private func onPool<T>(_ use: (DatabasePool) throws -> T) throws -> T {
        try translating {
            let pool = try currentPool()
            return try settings.retryingBusy { try use(pool) }
        }
    }

    private func translating<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw StoreError.translating(error, path: settings.path)
        }
    }

    func write<T>(_ body: (GRDB.Database) throws -> T) throws -> T {
        settings.ringQuietBell()
        let result = try onPool { pool in try pool.write(body) }
        settings.ringBell()
        return result
    }
}

/// Network mode: rollback journal, `unix-dotfile` locking, and a fresh
/// connection for every transaction, so that nothing is read from a stale cache.
final class NetworkConnections: SQLiteConnections {
    private let settings: SQLiteSettings
    /// How long one lock must be seen held, unchanged, before it is taken to be left by a killed process.
    let staleLockAge: TimeInterval

    /// The file last found to be ours; a different file at the path is looked at again before it is written.
    private let checked: Mutex<FileIdentity?>

    init(settings: SQLiteSettings, staleLockAge: TimeInterval = 45) throws {
        self.settings = settings
        self.staleLockAge = staleLockAge
        self.checked = Mutex(nil)
        var watch = LockWatch()
        do {
            try settings.retryingBusy(beforeRetry: { breakStaleLock(&watch) }, alsoRetry: lostLockRace) {
                try checkFile()
                let queue = try open()
                defer { try? queue.close() }
                try queue.writeWithoutTransaction { db in
                    try db.execute(sql: "PRAGMA journal_mode = DELETE")
                }
                try Schema.prepare(queue, path: settings.path, naming: settings.naming)
            }
        } catch {
            throw StoreError.translating(error, path: settings.path)
        }
    }

    /// Makes sure the file at the path is Fatchat's before a connection that may write opens it.
    private func checkFile() throws {
        let identity = try FileIdentity.of(settings.path, naming: settings.naming)
        if checked.withLock({ $0 == identity }) { return }
        _ = try DatabaseFile.inspect(settings.path, location: settings.uri(vfs: "unix-dotfile", readOnly: true), naming: settings.naming)
        checked.withLock { $0 = identity }
    }

    private func open() throws -> DatabaseQueue {
        // No busy timeout here: SQLite would wait for the lock inside this
        // connection, opened before the other writer committed, and on FUSE its
        // view of the file goes stale meanwhile (two bindfs mounts: "database disk
        // image is malformed"). `retryingBusy` waits instead, then opens afresh.
        var config = Configuration()
        config.busyMode = .immediateError
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: SQLiteSettings.writerCache)
            SQLFunctions.register(db)
        }
        return try DatabaseQueue(path: settings.uri(vfs: "unix-dotfile"), configuration: config)
    }

    /// Errors that mean another process won the race for the dotfile lock, so nothing was written.
    ///
    /// Over sshfs, `mkdir` of the lock directory can fail with an error other
    /// than EEXIST (SQLite says SQLITE_IOERR_LOCK), and a hot journal can vanish
    /// between SQLite seeing it and opening it (SQLITE_CANTOPEN while the
    /// database file is there). Both surfaced as `serviceUnavailable` to writers
    /// on two sshfs mounts of one directory. A read-only look at the file
    /// can meet another process setting up its lock state the same way.
    private func lostLockRace(_ error: DatabaseError) -> Bool {
        if error.extendedResultCode == .SQLITE_IOERR_LOCK || DatabaseFile.isTransientForReaders(error) { return true }
        if error.resultCode == .SQLITE_CANTOPEN { return access(settings.path, F_OK) == 0 }
        return false
    }

    /// Removes the dotfile lock that a process killed inside a transaction left behind.
    ///
    /// A lock is taken to be stale only when this process has watched the same
    /// lock (the same modification time) for longer than `staleLockAge` by its
    /// own clock. Neither the lock's age nor a long wait is enough: sshfs caches
    /// attributes by path (about 20 s) and reported an old lock's mtime for a
    /// live one, and a writer starved by others sees a lock at every retry;
    /// breaking those live locks let two writers commit at once.
    private func breakStaleLock(_ watch: inout LockWatch) {
        let lock = settings.path + ".lock"
        // lstat, not FileManager.attributesOfItem: Foundation also lists the file's extended
        // attributes, and smbnetfs stalls on listxattr for seconds and then fails with EIO.
        var info = stat()
        guard lstat(lock, &info) == 0 else {
            watch = LockWatch()
            return
        }
        let modified = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1_000_000_000)
        guard watch.modified == modified, let since = watch.since else {
            watch = LockWatch(modified: modified, since: Date())
            return
        }
        if Date().timeIntervalSince(since) > staleLockAge {
            rmdir(lock)
            watch = LockWatch()
        }
    }

    /// How long "malformed" is taken for a stale view of the file before it is believed.
    ///
    /// A FUSE mount caches a file's size for about a second, so a connection
    /// opened just after another mount's commit can read past what it thinks is
    /// the end of the file and see zeros where new pages are: SQLite then says
    /// "database disk image is malformed" about a sound file (seen with two
    /// bindfs mounts under load). Such a read fails before anything is
    /// written, so it is tried again, with a fresh connection, until the cache
    /// has had time to expire twice over.
    static let staleViewPatience: TimeInterval = 3

    /// When a transaction first found the file malformed; later attempts are retried until the patience runs out.
    struct StaleView {
        var since: Date?

        mutating func mayBeStale(_ error: DatabaseError) -> Bool {
            guard error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB else { return false }
            let now = Date()
            let first = since ?? now
            since = first
            return now.timeIntervalSince(first) < NetworkConnections.staleViewPatience
        }
    }

    /// The lock instance a waiting process is watching, and since when.
    struct LockWatch {
        var modified: Date?
        var since: Date?
    }

    private func withQueue<T>(_ body: (DatabaseQueue) throws -> T) throws -> T {
        do {
            var watch = LockWatch()
            var damage = StaleView()
            return try settings.retryingBusy(beforeRetry: { breakStaleLock(&watch) },
                                             alsoRetry: { lostLockRace($0) || damage.mayBeStale($0) }) {
                try checkFile()
                let queue = try open()
                defer { try? queue.close() }
                return try body(queue)
            }
        } catch {
            throw StoreError.translating(error, path: settings.path)
        }
    }

    func read<T>(_ body: (GRDB.Database) throws -> T) throws -> T {
        try withQueue { try $0.read(body) }
    }

    func write<T>(_ body: (GRDB.Database) throws -> T) throws -> T {
        try withQueue { try $0.write(body) }
    }
}

/// A file's device and inode: what tells "the same file" from "a file at the same path".
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64

    /// The file at `path`, which must be there and be a plain file, not a symlink.
    static func of(_ path: String, naming: ContainerNaming) throws -> FileIdentity {
        guard let identity = try ifPresent(path, naming: naming) else {
            throw StoreError(.serviceUnavailable, "\(path) is not there (\(String(cString: strerror(ENOENT)))).")
        }
        return identity
    }

    /// The file at `path`, or nil when nothing is there; a symlink someone planted is an error.
    static func ifPresent(_ path: String, naming: ContainerNaming) throws -> FileIdentity? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw StoreError(.serviceUnavailable, "\(path) cannot be reached (\(String(cString: strerror(errno)))).")
        }
        try DatabaseFile.checkRegular(info, path: path, naming: naming)
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}
