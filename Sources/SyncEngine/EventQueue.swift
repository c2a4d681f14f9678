import Foundation
import Synchronization

/// A queue of events to wait for with `poll()` on `descriptor`, which is
/// readable exactly while events are waiting.
final class EventQueue<Element: Sendable>: Sendable {
    private struct State {
        var buffer: [Element] = []
        var head = 0
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

    /// Adds an event, unless the queue is finished.
    ///
    /// The pipe is written after the lock is let go: the reader it wakes takes
    /// the lock at once, and would otherwise find it held and sleep again.
    func push(_ element: Element) {
        let first = state.withLock { state in
            if state.finished { return false }
            state.buffer.append(element)
            return state.buffer.count - state.head == 1
        }
        if first { pipe.wake() }
    }

    /// The oldest waiting event, or `nil` at once if there is none.
    ///
    /// The pipe is emptied whenever the queue is, so a byte that a `push` wrote
    /// after its event was taken costs one wake-up that finds nothing, never a busy loop.
    func pop() -> Element? {
        state.withLock { state in
            let element = state.removeFirst()
            if state.isEmpty { pipe.drain() }
            return element
        }
    }

    /// Ends the queue: later pushes are dropped.
    func finish() {
        state.withLock { $0.finished = true }
    }
}
