import Foundation
import Synchronization

/// A queue of events with two ways to wait: `await next()`, or `poll()` on
/// `descriptor`, which is readable exactly while events are waiting.
final class EventQueue<Element: Sendable>: Sendable {
    private struct State {
        var buffer: [Element] = []
        var head = 0
        var waiters: [CheckedContinuation<Element?, Never>] = []
        var finished = false

        var isEmpty: Bool { head == buffer.count }

        mutating func removeFirst() -> Element? {
            guard !isEmpty else { return nil }
            let element = buffer[head]
            head += 1
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 1024, head * 2 > buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
            return element
        }
    }

    private let state = Mutex(State())
    private let pipe: WakePipe

    /// The read end of a pipe that holds one byte while events are waiting.
    var descriptor: Int32 { pipe.readDescriptor }

    init() throws {
        pipe = try WakePipe()
    }

    /// Adds an event, handing it straight to an `await`ing consumer if there is one.
    func push(_ element: Element) {
        let waiter: CheckedContinuation<Element?, Never>? = state.withLock { state in
            if state.finished { return nil }
            if !state.waiters.isEmpty { return state.waiters.removeFirst() }
            state.buffer.append(element)
            if state.buffer.count - state.head == 1 { pipe.wake() }
            return nil
        }
        waiter?.resume(returning: element)
    }

    /// The oldest waiting event, or `nil` at once if there is none.
    func pop() -> Element? {
        state.withLock { state in
            let element = state.removeFirst()
            if element != nil, state.isEmpty { pipe.drain() }
            return element
        }
    }

    /// The oldest event, waiting for one if needed; `nil` once the queue is finished.
    func next() async -> Element? {
        await withCheckedContinuation { continuation in
            let ready: Element?? = state.withLock { state in
                if let element = state.removeFirst() {
                    if state.isEmpty { pipe.drain() }
                    return .some(element)
                }
                if state.finished { return .some(nil) }
                state.waiters.append(continuation)
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Ends the queue: waiting consumers get `nil`, later pushes are dropped.
    func finish() {
        let waiters = state.withLock { state in
            state.finished = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }
}
