import Foundation

/// Checks on a file descriptor that it is a regular file, not a FIFO, device, socket or directory.
enum RegularFile {
    static func check(_ fd: Int32, path: String) throws {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw StoreError(.assetFileNotFound, "Cannot look at \(path): \(DirectoryHandle.reason(errno)).")
        }
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFREG else {
            throw StoreError(.invalidArguments, "\(path) is \(describe(kind)), not a regular file; only a regular file can be stored.")
        }
        // Reads block again from here on; the open itself must not (a FIFO with no writer).
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
    }

    /// A kind of file in words.
    static func describe(_ kind: mode_t) -> String {
        switch kind {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }
}
