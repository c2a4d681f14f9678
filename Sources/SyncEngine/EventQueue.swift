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
    func push(_ element: Element) {
        state.withLock { state in
            if state.finished { return }
            state.buffer.append(element)
            if state.buffer.count - state.head == 1 { pipe.wake() }
        }
    }

    /// The oldest waiting event, or `nil` at once if there is none.
    func pop() -> Element? {
        state.withLock { state in
            let element = state.removeFirst()
            if element != nil, state.isEmpty { pipe.drain() }
            return element
        }
    }

    /// Ends the queue: later pushes are dropped.
    func finish() {
        state.withLock { $0.finished = true }
    }
}
