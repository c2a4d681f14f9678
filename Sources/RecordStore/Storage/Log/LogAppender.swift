import CStatfs
import Foundation
import Synchronization

/// The one writer of one log file: this client's own.
///
/// Entries are appended with `O_APPEND` and made durable with `fdatasync`
/// before `append` returns, so a caller that clears its outbox afterwards
/// loses nothing. A tail that a crash or a failed append left torn is cut off
/// when the log is opened again: only this client writes the file, and readers
/// stop there anyway. Whole entries after such bytes (an earlier build appended
/// after a failed append) are kept: the log is written again without the damage.
/// An appender whose append failed is spent (see `append`).
/// `compact` replaces the file with a smaller one (see `LogCompaction`).
final class LogAppender: Sendable {
    /// The file's name in its directory.
    let name: String
    private let state: Mutex<State>
    /// The newest clock stamp in the file when it was opened.
    let latestTime: HybridTime?
    /// Whether the log, as it was opened, is big enough and compacts well enough to compact on its own.
    let isWorthCompacting: Bool

    private struct State {
        var fd: Int32
        var end: Int64
        var header: LogHeader
        /// Set by a failed append, or a failed compaction: the file past `end`, or the file the name leads to,
        /// is no longer known.
        var spent = false
    }

    /// Opens or creates `<client>.log` in `directory`, a directory this user owns. With `readsDirect`
    /// (GlusterFS, whose mount may answer from a cache) what the file holds is read back with O_DIRECT.
    init(in directory: DirectoryHandle, client: UUID, account: String, mode: mode_t, readsDirect: Bool = false) throws {
        name = LogDirectory.fileName(for: client)
        let path = directory.path(of: name)
        var fd = openat(directory.fd, name, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else {
            let code = errno
            throw StoreError(code == EACCES || code == EPERM ? .permissionFailure : .serviceUnavailable,
                             "Cannot open the log \(path): \(DirectoryHandle.reason(code)).")
        }
        do {
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                throw StoreError(.badContainer, "\(path) is not a regular file; it was left untouched.")
            }
            // A compaction a crash interrupted left this behind; the log itself is whole either way.
            _ = unlinkat(directory.fd, LogCompaction.temporaryName(for: client), 0)
            let expected = LogHeader(client: client, account: account, generation: 0)
            if info.st_size == 0 {
                let bytes = LogFormat.encode(expected)
                try Self.write(bytes, to: fd, path: path)
                latestTime = nil
                isWorthCompacting = false
                state = Mutex(State(fd: fd, end: Int64(bytes.count), header: expected))
                return
            }
            let reading = try Self.reader(of: fd, named: name, in: directory, direct: readsDirect)
            // Decided now: `fd` may be replaced below, and the descriptor it held closed.
            let separate = reading.fd != fd
            defer { if separate { close(reading.fd) } }
            var found: LogHeader
            let headerSize: Int
            switch LogFileReader.header(of: reading.fd, direct: reading.direct) {
            case .success(let (header, size)) where header.client == client && header.account == account:
                (found, headerSize) = (header, size)
            case .failure(.incomplete):
                // A short read while a mount comes back looks the same as a header cut short: try again later.
                throw StoreError(.serviceUnavailable, "Cannot read the header of \(path) back; it was left as it is.")
            default:
                throw StoreError(.badContainer, "\(path) is not this client's log; it was left untouched. Move it away if it is damaged.")
            }
            var scan = LogFileReader.scan(reading.fd, from: Int64(headerSize), direct: reading.direct)
            switch scan.stop {
            case .caughtUp, .limit:
                break
            case .unreadable(let reason):
                // Bytes that could not be read may be whole entries: nothing is cut on a guess.
                throw StoreError(.serviceUnavailable, "Cannot read \(path) back (\(reason)); it was left as it is.")
            case .incomplete, .bad:
                let past = LogFileReader.entriesPastDamage(reading.fd, from: scan.end, direct: reading.direct)
                if let reason = past.unreadable {
                    throw StoreError(.serviceUnavailable, "Cannot read \(path) back (\(reason)); it was left as it is.")
                }
                if past.entries.isEmpty {
                    // Only this client writes here; what follows the last whole entry is its own torn append.
                    guard ftruncate(fd, off_t(scan.end)) == 0, fdatasync(fd) == 0 else {
                        throw StoreError(.serviceUnavailable, "Cannot cut the torn end off \(path): \(DirectoryHandle.reason(errno)).")
                    }
                } else {
                    // Whole entries follow bytes that are not one (an append an earlier build made after a failed
                    // one): every reader stops at those bytes and never gets to them, and a cut would destroy them.
                    // The log is written again without the damage, as a compaction writes it, in a new generation
                    // that every reader reads from its start.
                    scan.entries += past.entries
                    found.generation += 1
                    let bytes = try LogCompaction.bytes(scan.entries, header: found)
                    let replaced = try Self.replace(fd, named: name, in: directory, with: bytes)
                    close(fd)
                    fd = replaced
                    scan.end = Int64(bytes.count)
                }
            }
            latestTime = scan.entries.map(\.time).max()
            // The scan is in hand already, so weighing the automatic trigger costs only an encoding, and only past the floor.
            if scan.end >= LogCompaction.automaticMinimum, let compacted = try? LogCompaction.bytes(scan.entries, header: found) {
                isWorthCompacting = LogCompaction.isWorthIt(size: scan.end, compacted: Int64(compacted.count))
            } else {
                isWorthCompacting = false
            }
            state = Mutex(State(fd: fd, end: scan.end, header: found))
        } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        _ = state.withLock { close($0.fd) }
    }

    /// The offset just past the last entry written.
    var end: Int64 { state.withLock { $0.end } }

    /// Whether a failed append or compaction left this appender unusable: open the log again.
    var isSpent: Bool { state.withLock { $0.spent } }

    /// The file's header; its generation goes up with each compaction.
    var header: LogHeader { state.withLock { $0.header } }

    /// Rewrites the log as `LogCompaction` describes and renames the new file over it, holding off appends
    /// meanwhile; returns the sizes before and after. `directory` is the one the log was opened in.
    @discardableResult
    func compact(in directory: DirectoryHandle) throws -> (before: Int64, after: Int64) {
        try state.withLock { state in
            let path = directory.path(of: name)
            guard !state.spent else {
                throw StoreError(.serviceUnavailable, "An earlier append to \(path) failed; open it again to compact it.")
            }
            guard case .success(let (_, headerSize)) = LogFileReader.header(of: state.fd) else {
                throw StoreError(.serviceUnavailable, "Cannot read the header of \(path) back; it was not compacted.")
            }
            let scan = LogFileReader.scan(state.fd, from: Int64(headerSize))
            // Only this writer appends, so its log reads to the end it knows; anything else and the file is left as it is.
            guard scan.stop == .caughtUp, scan.end == state.end else {
                throw StoreError(.serviceUnavailable, "\(path) does not read back to its end (\(scan.stop)); it was not compacted.")
            }
            var header = state.header
            header.generation += 1
            let bytes = try LogCompaction.bytes(scan.entries, header: header)
            let fd: Int32
            do {
                fd = try Self.replace(state.fd, named: name, in: directory, with: bytes, syncingDirectory: false)
            } catch {
                // A rename a network filesystem reported as failed may have happened: then this descriptor
                // is of a file no name leads to, and whatever is appended to it is lost.
                state.spent = true
                throw error
            }
            // The name now holds the new file: append there from here on, whatever the directory sync says.
            close(state.fd)
            let before = state.end
            state = State(fd: fd, end: Int64(bytes.count), header: header)
            // Without this a crash could bring the old name back and lose what is appended to the new file.
            guard fsync(directory.fd) == 0 else {
                throw StoreError(.serviceUnavailable, "Cannot make the rename of \(path) durable: \(DirectoryHandle.reason(errno)).")
            }
            return (before, state.end)
        }
    }

    /// Writes `bytes` as a new file beside `fd`'s (`name` in `directory`), with its mode, and renames it over
    /// the log; returns the new file's descriptor. With `syncingDirectory`, the rename is made durable
    /// before it returns. A failure may leave either file under the name: the caller must not append to `fd`.
    private static func replace(_ fd: Int32, named name: String, in directory: DirectoryHandle, with bytes: [UInt8],
                                syncingDirectory: Bool = true) throws -> Int32 {
        let path = directory.path(of: name)
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw StoreError(.serviceUnavailable, "Cannot stat \(path): \(DirectoryHandle.reason(errno)).")
        }
        guard let client = LogDirectory.client(inFileName: name) else {
            throw StoreError(.internalError, "\(name) is not a log's name.")
        }
        let temporary = LogCompaction.temporaryName(for: client)
        _ = unlinkat(directory.fd, temporary, 0)
        let new = openat(directory.fd, temporary, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, info.st_mode & 0o777)
        guard new >= 0 else {
            throw StoreError(.serviceUnavailable, "Cannot make \(directory.path(of: temporary)): \(DirectoryHandle.reason(errno)).")
        }
        do {
            // The mode passed to openat went through the umask; the log keeps the mode it had.
            guard fchmod(new, info.st_mode & 0o777) == 0 else {
                throw StoreError(.serviceUnavailable, "Cannot set the mode of \(directory.path(of: temporary)): \(DirectoryHandle.reason(errno)).")
            }
            try write(bytes, to: new, path: directory.path(of: temporary))
            guard renameat(directory.fd, temporary, directory.fd, name) == 0 else {
                throw StoreError(.serviceUnavailable, "Cannot rename the rewritten log over \(path): \(DirectoryHandle.reason(errno)).")
            }
        } catch {
            close(new)
            _ = unlinkat(directory.fd, temporary, 0)
            throw error
        }
        // Without this a crash could bring the old name back and lose what is appended to the new file.
        if syncingDirectory, fsync(directory.fd) != 0 {
            close(new)
            throw StoreError(.serviceUnavailable, "Cannot make the rename of \(path) durable: \(DirectoryHandle.reason(errno)).")
        }
        return new
    }

    /// Appends the entries and waits until they are on disk; returns the offsets before and after them.
    ///
    /// When it throws, the file may hold none of the entries, part of one, or all of them: a network
    /// filesystem can fail the sync of a write that reached its server, and readers may already have
    /// taken those entries. Cutting the file back here could cut entries readers hold, or, once `end`
    /// no longer matches the file, entries that were acknowledged; leaving a torn part would hide every
    /// later entry from every reader. So nothing is cut here, and the appender is spent: the caller
    /// opens the log again, which reads back what the file really holds, keeps whole entries and cuts
    /// only what follows the last of them, or, if whole entries follow damage, writes the log again without it.
    @discardableResult
    func append(_ entries: [LogEntry]) throws -> (start: Int64, end: Int64) {
        var bytes: [UInt8] = []
        for entry in entries { try LogFormat.encode(entry, into: &bytes) }
        return try state.withLock { state in
            guard !state.spent else {
                throw StoreError(.serviceUnavailable, "An earlier append to the log \(name) failed; open it again to go on.")
            }
            let start = state.end
            do {
                try Self.write(bytes, to: state.fd, path: name)
            } catch {
                state.spent = true
                throw error
            }
            state.end = start + Int64(bytes.count)
            return (start, state.end)
        }
    }

    /// A descriptor to read `fd`'s file back with: with `direct`, the file opened again with O_DIRECT, so that
    /// the server answers rather than the mount's cache; `fd` itself where that is not asked for, or where the
    /// mount refuses O_DIRECT (EINVAL), as readers read it there. Any other failure to open it, or a name that
    /// no longer leads to `fd`'s file, throws: read through the cache, a torn tail could go unseen.
    private static func reader(of fd: Int32, named name: String, in directory: DirectoryHandle, direct: Bool) throws -> (fd: Int32, direct: Bool) {
        guard direct else { return (fd, false) }
        let other = openat(directory.fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | fatchat_direct_io_flag())
        guard other >= 0 else {
            let code = errno
            if code == EINVAL { return (fd, false) }
            throw StoreError(.serviceUnavailable, "Cannot open \(directory.path(of: name)) to read it back: \(DirectoryHandle.reason(code)).")
        }
        var mine = stat(), theirs = stat()
        guard fstat(fd, &mine) == 0, fstat(other, &theirs) == 0, mine.st_dev == theirs.st_dev, mine.st_ino == theirs.st_ino else {
            close(other)
            throw StoreError(.serviceUnavailable, "\(directory.path(of: name)) changed while it was opened; it was left as it is.")
        }
        return (other, true)
    }

    private static func write(_ bytes: [UInt8], to fd: Int32, path: String) throws {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress.map { $0 + written }, bytes.count - written) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                throw StoreError(.serviceUnavailable, "Cannot append to the log \(path): \(DirectoryHandle.reason(errno)).")
            }
            written += count
        }
        guard fdatasync(fd) == 0 else {
            throw StoreError(.serviceUnavailable, "Cannot make the log \(path) durable: \(DirectoryHandle.reason(errno)).")
        }
    }
}
