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

    /// How long the directory must stay quiet after a filesystem event before `wait` returns.
    ///
    /// SQLite writes a commit's pages to the WAL one `pwrite` at a time, 20 or more for one
    /// message, and each write is an event; the commit is visible only after the last. A look
    /// at the first event found nothing, and each write that followed woke the loop for another
    /// look. With a hundred receivers that was worst: all of them woke at the writer's first
    /// page and took the two cores from it, so its commit took longer, and woke them again. A
    /// writer that is mid-commit writes its next page within tens of microseconds, so a
    /// millisecond of quiet means it has finished, or was put off the CPU, which the caller's
    /// rechecks cover. Each delivery waits that millisecond (see BENCHMARKS.md, eighth round).
    static let quiet = 0.001
    /// The longest a stream of events may hold `wait` back, so that a writer who never pauses cannot stall the feed.
    static let mostSettling = 0.02

    /// Waits up to `timeout` seconds; after a filesystem event, until the directory has been quiet for `quiet`.
    ///
    /// Called on every wake-up of every client, so a filesystem event allocates nothing: the descriptors
    /// and the buffer its events are read into (and dropped; only their arrival counts) live on the stack.
    func wait(timeout: Double) -> Wake {
        let wake = poll(timeout: timeout)
        return wake == .filesystem ? settle() : wake
    }

    /// Waits for either descriptor, and drains the one that is ready; a wake-up through the pipe comes first.
    private func poll(timeout: Double) -> Wake {
        var fds = (pollfd(fd: wakePipe.readDescriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: inotify, events: Int16(POLLIN), revents: 0))
        let milliseconds = Int32(max(0, min(timeout * 1000, Double(Int32.max))))
        let ready = withUnsafeMutableBytes(of: &fds) { raw in
            Glibc.poll(raw.baseAddress?.assumingMemoryBound(to: pollfd.self), inotify >= 0 ? 2 : 1, milliseconds)
        }
        guard ready > 0 else { return .timeout }
        let woken = fds.0.revents != 0
        if woken { wakePipe.drain() }
        if !woken || fds.1.revents != 0 { drainEvents() }
        return woken ? .woken : .filesystem
    }

    /// After a filesystem event, sleeps until the directory has been quiet for `quiet`, so that one commit wakes the caller once.
    ///
    /// The events that arrive meanwhile wait in the kernel's queue and are drained
    /// together, with no wake-up each. A `wake()` meanwhile ends the wait, as
    /// does `mostSettling`.
    private func settle() -> Wake {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(Self.mostSettling * 1e9)
        while DispatchTime.now().uptimeNanoseconds < end {
            usleep(UInt32(Self.quiet * 1e6))
            switch poll(timeout: 0) {
            case .filesystem: continue
            case .woken: return .woken
            case .timeout: return .filesystem
            }
        }
        return .filesystem
    }

    /// Reads the waiting inotify events, to drop them.
    private func drainEvents() {
        guard inotify >= 0 else { return }
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 8) { buffer in
            while read(inotify, buffer.baseAddress, buffer.count) > 0 {}
        }
    }
}
