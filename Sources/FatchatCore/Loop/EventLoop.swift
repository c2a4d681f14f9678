import Foundation
import SyncEngine

/// One thread's `poll()` loop: watched descriptors, timers, a wake pipe and a signal pipe.
///
/// The full-screen client, the bot and `read --follow` each run one, as catgirl runs
/// one loop for everything. Handlers run one at a time on the thread that called
/// ``run()``, in this order each turn: signals, a wake, readable descriptors in the
/// order they were watched, then the timers that are due. A handler may watch,
/// schedule, cancel or stop. Nothing is missed while a handler is busy: a byte left
/// in a pipe keeps its descriptor readable until it is read, so the next `poll()`
/// returns at once.
public final class EventLoop {
    /// What `poll()` reported for a watched descriptor.
    public struct Readiness: Sendable, Equatable {
        /// The `revents` bits.
        public let events: Int16

        /// A read would not block: data, or end of file.
        public var isReadable: Bool { events & Int16(POLLIN) != 0 }
        /// The other end went away or the descriptor is unusable: reads will never block again,
        /// so a handler that ignores this would be called forever.
        public var isHungUp: Bool { events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 }
    }

    /// Names a watch or a timer, so that it can be cancelled.
    public struct Registration: Hashable, Sendable {
        fileprivate let id: Int
    }

    /// Wakes the loop from any thread: its current or next `poll()` returns, and the wake handler runs.
    public struct Waker: Sendable {
        fileprivate let pipe: WakePipe

        /// Wakes the loop; several wakes before it runs count as one.
        public func wake() { pipe.wake() }
    }

    private struct Watch {
        let id: Int
        let descriptor: Int32
        let handler: (Readiness) throws -> Void
    }

    private struct Scheduled {
        let id: Int
        var deadline: ContinuousClock.Instant
        let interval: Duration?
        let handler: () throws -> Void
    }

    private let wakePipe: WakePipe
    private var wakeHandler: (() throws -> Void)?
    private var signalPipe: WakePipe?
    private var signalHandler: ((Int32) throws -> Void)?
    private var watches: [Watch] = []
    private var timers: [Scheduled] = []
    private var nextID = 0
    private var stopping = false
    private let clock = ContinuousClock()

    /// A loop with nothing to watch yet; throws ``SyncError/system(_:_:)`` if its wake pipe cannot be made.
    public init() throws {
        wakePipe = try WakePipe()
    }

    /// A handle that wakes this loop from another thread.
    public var waker: Waker { Waker(pipe: wakePipe) }

    /// Runs `handler` on the loop's thread after each wake from a ``Waker``.
    public func onWake(_ handler: @escaping () throws -> Void) {
        wakeHandler = handler
    }

    /// The descriptor a signal handler writes each signal's number to, as one byte; every
    /// byte reaches `handler` on the loop's thread, in the order the signals came.
    ///
    /// A signal handler may do only async-signal-safe work, and `write(2)` is: this is the
    /// self-pipe that lets a signal that lands while a handler is busy, or on another
    /// thread, still wake the loop. Calling this again replaces the handler and keeps the pipe.
    public func receiveSignals(_ handler: @escaping (Int32) throws -> Void) throws -> Int32 {
        let pipe = try signalPipe ?? WakePipe()
        signalPipe = pipe
        signalHandler = handler
        return pipe.writeDescriptor
    }

    /// Calls `handler` each turn that `descriptor` is readable or hung up; the handler reads it.
    @discardableResult
    public func watch(_ descriptor: Int32, _ handler: @escaping (Readiness) throws -> Void) -> Registration {
        let id = makeID()
        watches.append(Watch(id: id, descriptor: descriptor, handler: handler))
        return Registration(id: id)
    }

    /// Calls `handler` once `delay` has passed, then every `interval` if one is given.
    ///
    /// A repeating timer that fell behind (its handler, or another, took longer than the
    /// interval) fires once, not once per missed interval.
    @discardableResult
    public func schedule(after delay: Duration, repeating interval: Duration? = nil,
                         _ handler: @escaping () throws -> Void) -> Registration {
        let id = makeID()
        timers.append(Scheduled(id: id, deadline: clock.now.advanced(by: delay), interval: interval, handler: handler))
        return Registration(id: id)
    }

    /// Stops calling a watch's or a timer's handler; cancelling one that is gone does nothing.
    public func cancel(_ registration: Registration) {
        watches.removeAll { $0.id == registration.id }
        timers.removeAll { $0.id == registration.id }
    }

    /// Makes ``run()`` return once the current handler returns; before `run()`, makes it return at once.
    public func stop() {
        stopping = true
    }

    /// Waits and calls handlers until ``stop()``, or until a handler throws, which this rethrows.
    ///
    /// Throws ``SyncError/system(_:_:)`` if `poll()` fails for a reason other than a signal.
    public func run() throws {
        defer { stopping = false }
        while !stopping {
            var fds = [pollfd(fd: wakePipe.readDescriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: signalPipe?.readDescriptor ?? -1, events: Int16(POLLIN), revents: 0)]
            let watched = watches
            fds += watched.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            // poll() skips a negative descriptor, so the signal slot may stay empty.
            if poll(&fds, nfds_t(fds.count), timeout()) < 0 {
                if errno == EINTR { continue }
                throw SyncError.system("poll", errno)
            }
            if fds[1].revents != 0, let signalPipe {
                for byte in signalPipe.drain() {
                    try signalHandler?(Int32(byte))
                    if stopping { return }
                }
            }
            if fds[0].revents != 0 {
                wakePipe.drain()
                try wakeHandler?()
                if stopping { return }
            }
            for (watch, fd) in zip(watched, fds.dropFirst(2)) where fd.revents != 0 {
                // An earlier handler this turn may have cancelled it.
                guard watches.contains(where: { $0.id == watch.id }) else { continue }
                try watch.handler(Readiness(events: fd.revents))
                if stopping { return }
            }
            try fireDueTimers()
        }
    }

    /// Milliseconds until the nearest timer, rounded up so that it is due when poll() returns; -1 for none.
    private func timeout() -> Int32 {
        guard let nearest = timers.map(\.deadline).min() else { return -1 }
        let left = clock.now.duration(to: nearest)
        if left <= .zero { return 0 }
        let (seconds, attoseconds) = left.components
        guard seconds < Int64(Int32.max / 1000) else { return Int32.max }
        return Int32(seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }

    private func fireDueTimers() throws {
        let now = clock.now
        let due = timers.filter { $0.deadline <= now }.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
        for timer in due {
            guard let index = timers.firstIndex(where: { $0.id == timer.id }) else { continue }
            if let interval = timer.interval {
                let next = timer.deadline.advanced(by: interval)
                timers[index].deadline = next > now ? next : now.advanced(by: interval)
            } else {
                timers.remove(at: index)
            }
            try timer.handler()
            if stopping { return }
        }
    }

    private func makeID() -> Int {
        nextID += 1
        return nextID
    }
}
