import Foundation

/// The client ID under which this process writes its log, held for as long as the process runs.
///
/// IDs are kept in the user's private data directory and reused, so that a
/// user who starts Fatchat a thousand times has as many logs as clients that
/// ran at once, not a thousand. Each ID has a lock file; a process takes the
/// first one no other process holds (`flock`, released when the process ends).
final class LogClientSlot: Sendable {
    let client: UUID
    private let fd: Int32

    init(in privateDirectory: URL, naming: ContainerNaming) throws {
        let path = privateDirectory.appendingPathComponent("log-clients", isDirectory: true).path
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw StoreError(.permissionFailure, "Cannot create \(path): \(DirectoryHandle.reason(errno)).")
        }
        let directory = try DirectoryHandle(path: path, naming: naming)
        for name in try LogDirectory.names(in: directory).sorted() {
            guard name.hasSuffix(".lock"), let client = UUID(uuidString: String(name.dropLast(5))) else { continue }
            let fd = openat(directory.fd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                self.client = client
                self.fd = fd
                return
            }
            close(fd)
        }
        let client = UUID()
        let fd = openat(directory.fd, client.uuidString + ".lock", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0, flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            if fd >= 0 { close(fd) }
            throw StoreError(.permissionFailure, "Cannot take a client ID in \(path): \(DirectoryHandle.reason(errno)).")
        }
        self.client = client
        self.fd = fd
    }

    deinit { close(fd) }
}
