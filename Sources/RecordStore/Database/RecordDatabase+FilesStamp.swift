import Foundation

/// What a `stat` tells of the files a local SQLite database lives in (the database and its write-ahead
/// log), for a loop that looks on a timer: files that have not changed since its last look were not
/// committed to since, so the look can be spared.
///
/// A commit appends to the log, or rewrites it from its start after a checkpoint; either way the log's
/// modification time moves. The kernel keeps that time to a clock tick, so a commit in the same tick as
/// the `stat` could leave it as it was: a stamp vouches for "unchanged" only once its files are
/// ``settledAfter`` older than the moment it was taken (``isSettled``).
public struct DatabaseFilesStamp: Equatable, Sendable {
    /// Each file's stamp, `nil` for a file not there.
    private let files: [FileStamp?]
    /// When the stamp was taken, and the newest modification time among its files, in nanoseconds since 1970.
    private let taken: Int64
    private let newest: Int64

    /// How much older than the stamp its files must be for it to vouch for "unchanged".
    public static let settledAfter: Int64 = 1_000_000_000

    init(paths: [String]) {
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        taken = Int64(clock.tv_sec) * 1_000_000_000 + Int64(clock.tv_nsec)
        files = paths.map { path in
            var info = stat()
            return lstat(path, &info) == 0 ? FileStamp(info) : nil
        }
        newest = files.compactMap { $0.map { Int64($0.modified) * 1_000_000_000 + Int64($0.modifiedNanoseconds) } }.max() ?? 0
    }

    /// Whether the files were last written well before the stamp was taken.
    public var isSettled: Bool { taken - newest >= Self.settledAfter }

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
}
