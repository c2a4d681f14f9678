import Foundation
import RecordStore
import Synchronization

/// Sleeps until the container directory changes, someone calls `wake()`, or the poll interval passes.
///
/// On a local filesystem inotify gives the wake-up; on a network filesystem
/// it may never fire, and the timer is the only signal. Either way the caller
/// confirms with a `ChangeSignal` before fetching.
///
/// A writer on a local `sqlite` container touches the directory's times once
/// its commit is visible: the bell (see `SQLiteSettings.ringBell`), an
/// attribute change of the directory itself. On the `log` engine the watched
/// directory is `logs/`, whose times a writer touches once its entries are in
/// its log (`LogStorage.write`); other machines' writers ring nothing here, so
/// that engine keeps its poll. Once a bell has rung, the watcher
/// trusts the writers to ring: for `trustInBells` it narrows its watch to the
/// directory's attributes, so a commit wakes it once, not at each page SQLite
/// writes to its log. A writer that does not ring (another program on the file)
/// is seen at the next bell, or when the trust lapses: then the watcher looks
/// once and listens to every change again. One inotify instance does both, as a
/// user may have only 128 (`fs.inotify.max_user_instances`), one per client.
///
/// A quiet commit (`QuietCommits`: a presence heartbeat) rings the database
/// file instead of the directory. The watcher counts it as a bell for its trust,
/// so that writers who only say "still here" keep the watch narrow, but does not
/// return: the commit is read at the next ordinary bell, when the trust lapses,
/// or at the timer's look.
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
    private let directory: String
    /// The name, in the directory, of the file whose attribute change is a quiet bell; empty for none.
    private let quietBell: [UInt8]
    private let wakePipe: WakePipe
    /// When the last bell rang, in `DispatchTime` nanoseconds; 0 before the first.
    private let lastBell = Atomic<UInt64>(0)
    /// Whether the watch is narrowed to the directory's own attributes.
    private let narrowed = Atomic<Bool>(false)
    private let unbelled = Atomic<Int>(0)

    /// How many times `wait` returned for something other than a bell or `wake()`: a filesystem event,
    /// the trust in bells lapsing, or the timeout. Each lets the caller look for commits that rang nothing.
    var looksWithoutBell: Int { unbelled.load(ordering: .relaxed) }

    /// Every change in the directory.
    private static let everything = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
    /// Attribute changes only, among which the bell.
    private static let bells = UInt32(IN_ATTRIB) | UInt32(IN_ONLYDIR)

    /// Watches `directory`; an attribute change of the file named `quietBell` in it is a quiet bell.
    init(directory: URL, quietBell: String? = nil, useInotify: Bool) throws {
        wakePipe = try WakePipe()
        self.directory = directory.path
        self.quietBell = Array((quietBell ?? "").utf8)
        var watch: Int32 = -1
        if useInotify {
            let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            if fd >= 0 {
                if inotify_add_watch(fd, directory.path, Self.everything) >= 0 {
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

    /// How long after a bell the watcher listens for bells alone.
    ///
    /// A commit that rings nothing (another program writing the file) waits at
    /// most this long while others' bells ring; with no bells it is seen at once.
    static let trustInBells = QuietCommits.watchersTrustBells

    /// Waits up to `timeout` seconds; after a filesystem event, until the directory has been quiet for `quiet`.
    ///
    /// Called on every wake-up of every client, so a filesystem event allocates nothing: the descriptors
    /// and the buffer its events are read into live on the stack.
    func wait(timeout: Double) -> Wake {
        let wake = waitForWake(timeout: timeout)
        switch wake {
        case .filesystem, .timeout: unbelled.add(1, ordering: .relaxed)
        case .committed, .woken: break
        }
        return wake
    }

    private func waitForWake(timeout: Double) -> Wake {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, min(timeout, 1e6)) * 1e9)
        if trustLeft() <= 0 {
            listen(narrowly: false)
            switch poll(timeout: timeout) {
            // A quiet commit rings before it writes: its pages, heard with the bell or not, need not wake the caller.
            case .quietBell: break
            case .other: return settle()
            case let polled: return polled.wake
            }
        }
        listen(narrowly: true)
        while true {
            let trust = trustLeft()
            let now = DispatchTime.now().uptimeNanoseconds
            // The trust lapsed: listen to everything again, and let the caller look once for what rang nothing.
            if trust <= 0 {
                listen(narrowly: false)
                return .timeout
            }
            if now >= end { return .timeout }
            switch poll(timeout: min(Double(end - now) / 1e9, trust)) {
            // Another file's attributes changed (SQLite run as root chowns its log on opening), or a quiet bell rang.
            case .other, .quietBell, .nothing: continue
            case let polled: return polled.wake
            }
        }
    }

    /// Seconds until the trust in bells lapses; 0 when it has, or no bell rang yet.
    private func trustLeft() -> Double {
        let rang = lastBell.load(ordering: .relaxed)
        guard rang != 0 else { return 0 }
        let trustedUntil = rang + UInt64(Self.trustInBells * 1e9)
        let now = DispatchTime.now().uptimeNanoseconds
        return trustedUntil > now ? Double(trustedUntil - now) / 1e9 : 0
    }

    /// Sets the watch's mask to the bells alone, or to every change; a change it was not listening to is not queued.
    private func listen(narrowly: Bool) {
        guard inotify >= 0, narrowed.exchange(narrowly, ordering: .relaxed) != narrowly else { return }
        _ = inotify_add_watch(inotify, directory, narrowly ? Self.bells : Self.everything)
    }

    /// What one `poll` found: the greatest that applies of a wake-up through the pipe, a bell, a quiet bell,
    /// another event, or nothing.
    private enum Polled: Comparable {
        case nothing, other, quietBell, bell, woken

        var wake: Wake {
            switch self {
            case .woken: .woken
            case .bell: .committed
            case .quietBell, .other: .filesystem
            case .nothing: .timeout
            }
        }
    }

    /// Waits for the pipe and the watch, and drains what is ready; a wake-up through the pipe comes first, then a bell.
    private func poll(timeout: Double) -> Polled {
        var fds = (pollfd(fd: wakePipe.readDescriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: inotify, events: Int16(POLLIN), revents: 0))
        let milliseconds = Int32(max(0, min((timeout * 1000).rounded(.up), Double(Int32.max))))
        let ready = withUnsafeMutableBytes(of: &fds) { raw in
            Glibc.poll(raw.baseAddress?.assumingMemoryBound(to: pollfd.self), 2, milliseconds)
        }
        guard ready > 0 else { return .nothing }
        let woken = fds.0.revents != 0
        if woken { wakePipe.drain() }
        let heard = fds.1.revents != 0 ? drainEvents() : .nothing
        if heard == .bell || heard == .quietBell {
            lastBell.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
            // At once, so the pages of commits made while the caller fetches are not queued.
            listen(narrowly: true)
        }
        return woken ? .woken : heard
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
            switch poll(timeout: 0) {
            case .other, .quietBell: continue
            case .nothing: return .filesystem
            case let polled: return polled.wake
            }
        }
        return .filesystem
    }

    /// Reads the waiting events, to drop them; a bell among them is an attribute change of the directory itself
    /// (an event without a name), a quiet bell one of the file named `quietBell`.
    private func drainEvents() -> Polled {
        guard inotify >= 0 else { return .nothing }
        return withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 8) { buffer in
            var heard = Polled.nothing
            while true {
                let count = read(inotify, buffer.baseAddress, buffer.count)
                guard count > 0 else { break }
                if heard == .nothing { heard = .other }
                // Each event: wd, mask, cookie and len (4 bytes each), then len bytes of name.
                var offset = 0
                while heard != .bell, offset + 16 <= count {
                    let mask = buffer.load(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
                    if mask & UInt32(IN_ATTRIB) != 0 {
                        if length == 0 {
                            heard = .bell
                        } else if heard < .quietBell, names(quietBell, UnsafeRawBufferPointer(rebasing: buffer[(offset + 16)..<min(count, offset + 16 + length)])) {
                            heard = .quietBell
                        }
                    }
                    offset += 16 + length
                }
            }
            return heard
        }
    }

    /// Whether an event's name field (the name, then NUL padding) holds `name`.
    private func names(_ name: [UInt8], _ field: UnsafeRawBufferPointer) -> Bool {
        guard !name.isEmpty, field.count > name.count, field[name.count] == 0 else { return false }
        return field.prefix(name.count).elementsEqual(name)
    }
}
