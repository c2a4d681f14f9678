import Foundation

/// A pipe that wakes a `poll()`: a byte written to ``writeDescriptor`` makes ``readDescriptor`` readable.
///
/// Both ends are non-blocking and close-on-exec, and close with the pipe. Every
/// wake-up in Fatchat goes through this one type: the engine's event queue, its
/// change watcher, and the event loop's wake and signal pipes.
public final class WakePipe: Sendable {
    /// The end to `poll()` for reading.
    public let readDescriptor: Int32
    /// The end to write to; `write(2)` is async-signal-safe, so a signal handler may use it.
    public let writeDescriptor: Int32

    /// Opens the pipe; throws ``SyncError/system(_:_:)`` when the process is out of descriptors.
    public init() throws {
        var fds: [Int32] = [-1, -1]
        // Glibc's `pipe2` is not visible from Swift, so the flags are set one by one.
        guard pipe(&fds) == 0 else { throw SyncError.system("pipe", errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        (readDescriptor, writeDescriptor) = (fds[0], fds[1])
    }

    deinit {
        close(readDescriptor)
        close(writeDescriptor)
    }

    /// Writes `byte`. When the pipe is full the byte is dropped: the reader is awake already.
    public func wake(_ byte: UInt8 = 1) {
        var byte = byte
        _ = write(writeDescriptor, &byte, 1)
    }

    /// Reads every waiting byte, without blocking, and returns them in the order written.
    @discardableResult
    public func drain() -> [UInt8] {
        var drained: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let count = read(readDescriptor, &buffer, buffer.count)
            if count > 0 {
                drained += buffer[0..<count]
            } else if count < 0, errno == EINTR {
                continue
            } else {
                return drained
            }
        }
    }
}
