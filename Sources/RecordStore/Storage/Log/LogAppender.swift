import Foundation
import Synchronization

/// The one writer of one log file: this client's own.
///
/// Entries are appended with `O_APPEND` and made durable with `fdatasync`
/// before `append` returns, so a caller that clears its outbox afterwards
/// loses nothing. A tail that a crash left torn is cut off when the log is
/// opened again: only this client writes the file, and readers stop there anyway.
final class LogAppender: Sendable {
    let header: LogHeader
    /// The file's name in its directory.
    let name: String
    private let state: Mutex<(fd: Int32, end: Int64)>
    /// The newest clock stamp in the file when it was opened.
    let latestTime: HybridTime?

    /// Opens or creates `<client>.log` in `directory`, a directory this user owns.
    init(in directory: DirectoryHandle, client: UUID, account: String, mode: mode_t) throws {
        name = LogDirectory.fileName(for: client)
        let fd = openat(directory.fd, name, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw StoreError(.permissionFailure, "Cannot open the log \(directory.path(of: name)): \(DirectoryHandle.reason(errno)).")
        }
        do {
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                throw StoreError(.badContainer, "\(directory.path(of: name)) is not a regular file; it was left untouched.")
            }
            let expected = LogHeader(client: client, account: account, generation: 0)
            if info.st_size == 0 {
                let bytes = LogFormat.encode(expected)
                try Self.write(bytes, to: fd, path: directory.path(of: name))
                header = expected
                latestTime = nil
                state = Mutex((fd, Int64(bytes.count)))
                return
            }
            guard case .success(let (found, headerSize)) = LogFileReader.header(of: fd),
                  found.client == client, found.account == account else {
                throw StoreError(.badContainer, "\(directory.path(of: name)) is not this client's log; it was left untouched. Move it away if it is damaged.")
            }
            let scan = LogFileReader.scan(fd, from: Int64(headerSize))
            if scan.stop != .caughtUp {
                // Only this client writes here; what follows the last whole entry is its own torn append.
                guard ftruncate(fd, off_t(scan.end)) == 0, fdatasync(fd) == 0 else {
                    throw StoreError(.serviceUnavailable, "Cannot cut the torn end off \(directory.path(of: name)): \(DirectoryHandle.reason(errno)).")
                }
            }
            header = found
            latestTime = scan.entries.map(\.time).max()
            state = Mutex((fd, scan.end))
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

    /// Appends the entries and waits until they are on disk; returns the offsets before and after them.
    @discardableResult
    func append(_ entries: [LogEntry]) throws -> (start: Int64, end: Int64) {
        var bytes: [UInt8] = []
        for entry in entries { try LogFormat.encode(entry, into: &bytes) }
        return try state.withLock { state in
            let start = state.end
            do {
                try Self.write(bytes, to: state.fd, path: name)
            } catch {
                // Leave no half entry behind for readers to stop at.
                _ = ftruncate(state.fd, off_t(start))
                throw error
            }
            state.end = start + Int64(bytes.count)
            return (start, state.end)
        }
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
