import Foundation

/// What a `stat` tells of the files a local SQLite database lives in (the database and its write-ahead
/// log), for a loop that looks on a timer: files that have not changed since its last look were not
/// committed to since, so the look can be spared.
///
/// A commit appends to the log, or rewrites it from its start after a checkpoint; either way the log's
/// modification time moves. The kernel keeps that time to a clock tick, so a commit in the same tick as
/// the `stat` could leave it as it was: a stamp vouches for "unchanged" only once its files are
/// ``settledAfter`` older than the moment it was taken (``isSettled``).
///
/// The same stamp of the `log` engine's `logs/` (`RecordDatabase.bellStamp()`) tells whether anyone
/// rang its bell since, and vouches at once (see `LogStorage.bellStamp()`).
public struct DatabaseFilesStamp: Equatable, Sendable {
    /// Each file's stamp, `nil` for a file not there.
    private let files: [FileStamp?]
    /// When the stamp was taken, and the newest modification time among its files, in nanoseconds since 1970.
    private let taken: Int64
    private let newest: Int64
    /// How much older than the stamp its files must be for it to vouch for "unchanged", in nanoseconds;
    /// `nil` when it vouches at once.
    private let settle: Int64?

    /// How much older than the stamp a database's files must be for it to vouch for "unchanged".
    public static let settledAfter: Int64 = 1_000_000_000

    init(paths: [String]) {
        self.init(files: paths.map { path in
            var info = stat()
            return lstat(path, &info) == 0 ? info : nil
        }, settledAfter: Self.settledAfter)
    }

    /// A stamp of files already `stat`ed, which vouches for "unchanged" once they are `settledAfter`
    /// nanoseconds old, or at once for `nil`.
    init(files: [stat?], settledAfter: Int64?) {
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        taken = Int64(clock.tv_sec) * 1_000_000_000 + Int64(clock.tv_nsec)
        settle = settledAfter
        self.files = files.map { $0.map(FileStamp.init) }
        newest = self.files.compactMap { $0.map { Int64($0.modified) * 1_000_000_000 + Int64($0.modifiedNanoseconds) } }.max() ?? 0
    }

    /// Whether the files were last written well before the stamp was taken.
    public var isSettled: Bool { settle.map { taken - newest >= $0 } ?? true }

    /// The same files, unchanged; when the stamps were taken does not count.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.files == rhs.files }
}

extension RecordDatabase {
    /// A stamp of this database's files, where it is a local SQLite file; `nil` for any other storage,
    /// whose files (if any) a `stat` cannot vouch for.
    public func filesStamp() -> DatabaseFilesStamp? {
        guard let sqlite = storage as? SQLiteStorage, sqlite.connections is LocalConnections else { return nil }
        return DatabaseFilesStamp(paths: [sqlite.path, sqlite.path + "-wal"])
    }

    /// A stamp of the folder whose times a loud commit touches once it is visible (its bell), where a
    /// `stat` through another mount sees it move: `logs/` on the `log` engine; `nil` on any other.
    /// Unlike `filesStamp()`, it cannot vouch for a quiet commit, which rings nothing.
    public func bellStamp() -> DatabaseFilesStamp? {
        (storage as? LogStorage)?.bellStamp()
    }
}
