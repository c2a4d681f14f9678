import Foundation

/// Sleeps until the container directory changes, someone calls `wake()`, or the poll interval passes.
///
/// On a local filesystem inotify gives the wake-up; on a network filesystem
/// it may never fire, and the timer is the only signal. Either way the caller
/// confirms with a `ChangeSignal` before fetching.
final class ChangeWatcher: Sendable {
    /// Why `wait` returned.
    enum Wake: Sendable {
        case filesystem, woken, timeout
    }

    private let inotify: Int32
    private let wakePipe: WakePipe

    init(directory: URL, useInotify: Bool) throws {
        wakePipe = try WakePipe()
        var watch: Int32 = -1
        if useInotify {
            let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            if fd >= 0 {
                let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
                if inotify_add_watch(fd, directory.path, mask) >= 0 {
                    watch = fd
                } else {
                    close(fd)
                }
            }
        }
        inotify = watch
    }

    deinit {
        if inotify >= 0 { close(inotify) }
    }

    /// Whether inotify watches the directory, so that a commit on this machine wakes `wait` without the timer.
    var seesFilesystemEvents: Bool { inotify >= 0 }

    /// Makes the current or next `wait` return at once.
    func wake() {
        wakePipe.wake()
    }

    /// Waits up to `timeout` seconds.
    ///
    /// Called on every wake-up of every client, so a filesystem event allocates nothing: the descriptors
    /// and the buffer its events are read into (and dropped; only their arrival counts) live on the stack.
    func wait(timeout: Double) -> Wake {
        var fds = (pollfd(fd: wakePipe.readDescriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: inotify, events: Int16(POLLIN), revents: 0))
        let milliseconds = Int32(max(0, min(timeout * 1000, Double(Int32.max))))
        let ready = withUnsafeMutableBytes(of: &fds) { raw in
            poll(raw.baseAddress?.assumingMemoryBound(to: pollfd.self), inotify >= 0 ? 2 : 1, milliseconds)
        }
        guard ready > 0 else { return .timeout }
        let woken = fds.0.revents != 0
        if woken { wakePipe.drain() }
        if !woken || fds.1.revents != 0 { drainEvents() }
        return woken ? .woken : .filesystem
    }

    /// Reads the waiting inotify events, to drop them.
    private func drainEvents() {
        guard inotify >= 0 else { return }
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 8) { buffer in
            while read(inotify, buffer.baseAddress, buffer.count) > 0 {}
        }
    }
}
