import Foundation
import GRDB

/// RecordStore's own SQLite files: made complete and marked before anyone sees them, and recognised before any write.
///
/// Opening a database for writing changes it (GRDB switches it to WAL and
/// writes to make the -wal file), so a file is looked at through a read-only
/// connection first. Only a file marked with RecordStore's `application_id`, or
/// one an earlier build made (RecordStore's tables, no mark yet), goes further.
enum DatabaseFile {
    /// `PRAGMA application_id` of every RecordStore database: "FCHT" in ASCII.
    static let applicationID: Int32 = 0x4643_4854

    /// What a file turned out to be.
    enum Kind: Equatable {
        /// Marked as RecordStore's.
        case ours
        /// Made by a build from before the mark; it is marked once it has been opened.
        case unmarked
    }

    /// Tells a RecordStore database from anything else, changing nothing; throws for what must not be opened.
    ///
    /// `location` is what SQLite opens (a path, or a URI naming another VFS); `naming` words the errors.
    static func inspect(_ path: String, location: String? = nil, naming: ContainerNaming) throws -> Kind {
        try checkEntries(path, naming: naming)
        do {
            return try query(path, location: location, naming: naming)
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_READONLY_ROLLBACK {
            // A writer died inside a transaction and left a hot journal. Rolling it
            // back is a write, so only the header written at creation can say whose file it is.
            guard try markInHeader(path) == applicationID else {
                throw StoreError(.badDatabase, "\(path) holds an unfinished transaction of a program that is not \(naming.programName) (or of a \(naming.programName) build from before files were marked); it was left untouched. Open it once with the program that wrote it.")
            }
            return .ours
        }
    }

    /// Errors of a read-only connection that only mean a writer is setting up or recovering the WAL index: try again.
    static func isTransientForReaders(_ error: DatabaseError) -> Bool {
        [.SQLITE_READONLY_RECOVERY, .SQLITE_READONLY_CANTLOCK, .SQLITE_READONLY_CANTINIT].contains(error.extendedResultCode)
    }

    /// Asks the file through a read-only connection what it is.
    private static func query(_ path: String, location: String?, naming: ContainerNaming) throws -> Kind {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .immediateError
        let queue = try DatabaseQueue(path: location ?? path, configuration: config)
        defer { try? KeptConnections.close(queue) }
        let migrator = Schema.migrator
        return try queue.read { db in
            let mark = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            guard mark == applicationID || (mark == 0 && tables.contains("fatchat_meta")) else {
                throw StoreError(.badDatabase, "\(path) is an SQLite database, but not a \(naming.programName) one; it was left untouched. Point the container somewhere else.")
            }
            if tables.contains("grdb_migrations"), try migrator.hasBeenSuperseded(db) {
                throw StoreError(.incompatibleVersion, "\(path) was written by a newer version of \(naming.programName); upgrade this build to open it. The file was left untouched.")
            }
            return mark == applicationID ? .ours : .unmarked
        }
    }

    /// The `application_id` in the file's header on disk, read without SQLite; 0 when it has none.
    private static func markInHeader(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            throw StoreError(.serviceUnavailable, "Cannot read \(path): \(DirectoryHandle.reason(errno)).")
        }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 100)
        let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count == header.count, header.starts(with: Array("SQLite format 3\0".utf8)) else { return 0 }
        return header[68..<72].reduce(Int32(0)) { $0 << 8 | Int32($1) }
    }

    /// Refuses a database path, or a journal beside it, that is a symlink, and a database file that is not a plain, non-empty file.
    ///
    /// SQLite itself opens -wal, -shm and -journal with `O_NOFOLLOW`; this says
    /// so plainly instead of "unable to open database file".
    private static func checkEntries(_ path: String, naming: ContainerNaming) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw StoreError(.serviceUnavailable, "\(path) is not there (\(DirectoryHandle.reason(errno))); the container may be unmounted or moved.")
        }
        try checkRegular(info, path: path, naming: naming)
        if info.st_size == 0 {
            throw StoreError(.badDatabase, "\(path) is empty (0 bytes): it was truncated, or its creation never finished. It was left as it is; restore it from a backup, or remove the container and make a new one with \(naming.creating()).")
        }
        for suffix in ["-wal", "-shm", "-journal"] where lstat(path + suffix, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK {
            throw StoreError(.badContainer, "\(path + suffix) is a symbolic link. \(naming.programName) follows no symlink inside a container, since any member could plant one; remove it.")
        }
    }

    /// Refuses what is not a plain file: a symlink someone planted, a directory, a FIFO.
    static func checkRegular(_ info: stat, path: String, naming: ContainerNaming) throws {
        let kind = info.st_mode & S_IFMT
        if kind == S_IFLNK {
            throw StoreError(.badContainer, "\(path) is a symbolic link. \(naming.programName) follows no symlink inside a container, since any member could plant one; put the real file back.")
        }
        guard kind == S_IFREG else {
            throw StoreError(.badDatabase, "\(path) is \(RegularFile.describe(kind)), not a database file; it was left untouched.")
        }
    }

    /// Makes a new, marked database named `name` in `directory`, unless something has that name already.
    ///
    /// The file is built under a temporary name and linked into place whole,
    /// so no process ever sees it empty or half made; if another process
    /// linked its own first, that one stays. Returns whether this call made it.
    @discardableResult
    static func create(_ name: String, in directory: DirectoryHandle, mode: mode_t?, group: gid_t?) throws -> Bool {
        let temporary = ".\(name).\(UUID().uuidString)"
        close(try directory.createFile(temporary, mode: mode, group: group))
        defer {
            directory.remove(temporary)
            directory.remove(temporary + "-journal")
        }
        do {
            var config = Configuration()
            config.prepareDatabase { db in SQLFunctions.register(db) }
            let queue = try DatabaseQueue(path: directory.path(of: temporary), configuration: config)
            try Schema.migrator.migrate(queue)
            try queue.writeWithoutTransaction { try mark($0) }
            try KeptConnections.close(queue)
        } catch {
            throw StoreError.translating(error, path: directory.path(of: name))
        }
        return try directory.link(temporary, as: name)
    }

    /// Sets the mark; a pragma takes no bound parameter, and this one is a constant of ours.
    static func mark(_ db: GRDB.Database) throws {
        try db.execute(sql: "PRAGMA application_id = \(applicationID)")
    }
}
