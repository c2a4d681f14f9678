import Foundation
import Synchronization

/// Sleeps until the container directory changes, someone calls `wake()`, or the poll interval passes.
///
/// On a local filesystem inotify gives the wake-up; on a network filesystem
/// it may never fire, and the timer is the only signal. Either way the caller
/// confirms with a `ChangeSignal` before fetching.
///
/// Two watches look at the directory. One sees every change in it, such as
/// each page SQLite writes to its log. The other sees only the directory's own
/// attributes, which a writer touches once a commit is visible (the bell, see
/// `SQLiteSettings.ringBell`). Once a bell has rung, the watcher trusts the
/// writers to ring and stops listening to their pages for `trustInBells`, so a
/// commit wakes it once, not at its first page; a writer that does not ring
/// (another program on the file) is seen at the next bell, or when the trust
/// lapses, when the watcher looks once and listens to every change again.
final class ChangeWatcher: Sendable {
    /// Why `wait` returned.
    enum Wake: Sendable {
        /// A change in the directory, after it went quiet.
        case filesystem
        /// A bell: a writer's commit is visible.
        case committed
        /// `wake()` was called.
        case woken
        case timeout
    }

    private let inotify: Int32
    private let bell: Int32
    private let wakePipe: WakePipe
    /// When the last bell rang, in `DispatchTime` nanoseconds; 0 before the first.
    private let lastBell = Atomic<UInt64>(0)

    init(directory: URL, useInotify: Bool) throws {
        wakePipe = try WakePipe()
        let everything = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
        inotify = useInotify ? Self.watch(directory, mask: everything) : -1
        bell = inotify >= 0 ? Self.watch(directory, mask: UInt32(IN_ATTRIB) | UInt32(IN_ONLYDIR)) : -1
    }

    /// A non-blocking inotify descriptor watching `directory` for `mask`, or -1 when there is none.
    private static func watch(_ directory: URL, mask: UInt32) -> Int32 {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return -1 }
        guard inotify_add_watch(fd, directory.path, mask) >= 0 else {
            close(fd)
            return -1
        }
        return fd
    }

    deinit {
        if inotify >= 0 { close(inotify) }
        if bell >= 0 { close(bell) }
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

    /// How long after a bell the watcher listens for bells alone.
    ///
    /// A commit that rings nothing (another program writing the file) waits at
    /// most this long while others' bells ring; with no bells it is seen at once.
    static let trustInBells = 2.0

    /// Waits up to `timeout` seconds; after a filesystem event, until the directory has been quiet for `quiet`.
    ///
    /// Called on every wake-up of every client, so a filesystem event allocates nothing: the descriptors
    /// and the buffer its events are read into (and dropped; only their arrival counts) live on the stack.
    func wait(timeout: Double) -> Wake {
        let now = DispatchTime.now().uptimeNanoseconds
        let rang = lastBell.load(ordering: .relaxed)
        let trustedUntil = rang == 0 ? 0 : rang + UInt64(Self.trustInBells * 1e9)
        let trust = trustedUntil > now ? Double(trustedUntil - now) / 1e9 : 0
        guard trust > 0 else {
            let wake = poll(timeout: timeout, everything: true)
            return wake == .filesystem ? settle() : wake
        }
        let wake = poll(timeout: min(timeout, trust), everything: false)
        // The trust lapsed: what came meanwhile without a bell is looked at now.
        if wake == .timeout, trust <= timeout, drainEvents(inotify) { return settle() }
        return wake
    }

    /// Waits for the descriptors, and drains the ones that are ready; a wake-up through the pipe comes first, then a bell.
    ///
    /// With `everything` off, the directory's other changes are not waited for.
    private func poll(timeout: Double, everything: Bool) -> Wake {
        var fds = (pollfd(fd: wakePipe.readDescriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: bell, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: everything ? inotify : -1, events: Int16(POLLIN), revents: 0))
        let milliseconds = Int32(max(0, min(timeout * 1000, Double(Int32.max))))
        let ready = withUnsafeMutableBytes(of: &fds) { raw in
            Glibc.poll(raw.baseAddress?.assumingMemoryBound(to: pollfd.self), 3, milliseconds)
        }
        guard ready > 0 else { return .timeout }
        let woken = fds.0.revents != 0
        if woken { wakePipe.drain() }
        if fds.1.revents != 0, drainEvents(bell) {
            lastBell.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
            // The commit's pages came before its bell: they need no look of their own.
            drainEvents(inotify)
            return woken ? .woken : .committed
        }
        if fds.2.revents != 0 { drainEvents(inotify) }
        return woken ? .woken : fds.2.revents != 0 ? .filesystem : .timeout
    }

    /// After a filesystem event, sleeps until the directory has been quiet for `quiet`, so that one commit wakes the caller once.
    ///
    /// The events that arrive meanwhile wait in the kernel's queue and are drained
    /// together, with no wake-up each. A `wake()` or a bell meanwhile ends the
    /// wait, as does `mostSettling`.
    private func settle() -> Wake {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(Self.mostSettling * 1e9)
        while DispatchTime.now().uptimeNanoseconds < end {
            usleep(UInt32(Self.quiet * 1e6))
            switch poll(timeout: 0, everything: true) {
            case .filesystem: continue
            case .woken: return .woken
            case .committed: return .committed
            case .timeout: return .filesystem
            }
        }
        return .filesystem
    }

    /// Reads the waiting events of an inotify descriptor, to drop them; tells whether there were any.
    @discardableResult
    private func drainEvents(_ fd: Int32) -> Bool {
        guard fd >= 0 else { return false }
        return withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 8) { buffer in
            var any = false
            while read(fd, buffer.baseAddress, buffer.count) > 0 { any = true }
            return any
        }
    }
}
