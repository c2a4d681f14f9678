import Foundation
import Synchronization

/// Work whose items are independent and each costs tens of microseconds (an Ed25519 signature made or
/// checked), spread over the machine's cores when there are enough items to pay for waking the workers;
/// and two independent pieces of work of milliseconds each (two files opened, two lists read) at once.
public enum OnAllCores {
    /// Fewer items than this per worker are done on the caller's thread: waking a worker costs more.
    static let itemsPerWorker = 8

    /// The cores this process may run on, read once: Foundation reads them from the kernel on every ask,
    /// which cost a save of one record (a receiver's token, a post) tens of microseconds.
    static let cores = ProcessInfo.processInfo.activeProcessorCount

    /// The threads that take work beside the caller's, one for each other core. They are the process's
    /// own (`JobThread`), not Dispatch's: Dispatch's first worker starts a timer that wakes every idle
    /// client once a second for good.
    static let helpers = (1..<max(cores, 1)).map { JobThread(name: "fatchat.core\($0)") }

    /// `transform` of each item, in order. `transform` must be safe to call from several threads at once.
    static func map<Item: Sendable, Result: Sendable>(_ items: [Item], _ transform: @escaping @Sendable (Item) -> Result) -> [Result] {
        let workers = min(cores, items.count / itemsPerWorker)
        guard workers > 1 else { return items.map(transform) }
        let results = Shared<[Int: Result]>([:])
        perform(workers) { worker in
            let mine = stride(from: worker, to: items.count, by: workers).map { ($0, transform(items[$0])) }
            results.withLock { all in
                for (index, result) in mine { all[index] = result }
            }
        }
        return results.withLock { all in items.indices.compactMap { all[$0] } }
    }

    /// `body` of each of `count` parts, taken in turn by the caller and by the helpers, and returns once all
    /// are done. The caller waits only for parts a helper began, so a part may itself spread work: a
    /// helper busy with an outer part leaves the inner ones to the caller.
    static func perform(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let parts = Parts(count: count, body: body)
        // A helper that comes to its job after the caller is done finds nothing to keep alive.
        for helper in helpers.prefix(count - 1) {
            helper.run { [weak parts] in parts?.takeAll() }
        }
        parts.takeAll()
        parts.waitForAll()
    }

    /// `transform` of each item, made on the other cores while the caller does work of its own, which
    /// takes the outputs in order (`Ahead.output`): a batch's records signed while the first ones are written.
    ///
    /// With fewer items than two workers' worth, or one core, every output is made at once on the
    /// caller's thread, as `map` would, before the caller goes on.
    static func ahead<Item: Sendable, Output: Sendable>(_ items: [Item], _ transform: @escaping @Sendable (Item) -> Output) -> Ahead<Output> {
        let spread = cores > 1 && items.count >= 2 * itemsPerWorker
        let ahead = Ahead(count: items.count, workers: spread ? cores - 1 : 0) { transform(items[$0]) }
        if !spread { ahead.makeAll() }
        return ahead
    }

    /// `first` and `second` at once: the caller runs one, and another core the other if one is free.
    ///
    /// Both run to their end. `first`'s error is thrown before `second`'s, as if they had run in turn.
    /// Both must be safe to run beside each other. Each keeps the caller's ``LockPatience``, whichever
    /// thread runs it: a thread that must not wait on a locked file must not wait through another.
    public static func both<A: Sendable, B: Sendable>(_ first: @escaping @Sendable () throws -> A, _ second: @escaping @Sendable () throws -> B) throws -> (A, B) {
        let firstResult = Shared<Result<A, any Error>?>(nil), secondResult = Shared<Result<B, any Error>?>(nil)
        let patience = LockPatience.deadline
        perform(2) { index in
            LockPatience.$deadline.withValue(patience) {
                if index == 0 {
                    let result = Result { try first() }
                    firstResult.withLock { $0 = result }
                } else {
                    let result = Result { try second() }
                    secondResult.withLock { $0 = result }
                }
            }
        }
        guard let a = firstResult.withLock({ $0 }), let b = secondResult.withLock({ $0 }) else {
            throw StoreError(.internalError, "Two pieces of work run at once did not both finish.")
        }
        return (try a.get(), try b.get())
    }
}

/// Outputs that other cores make ahead of the caller who takes them (`OnAllCores.ahead`).
///
/// Workers begin the items in order. The caller who asks for an item no one has begun makes it
/// itself; for one a worker is making, it makes the next one no one has begun, and waits only
/// when there is none.
final class Ahead<Output: Sendable>: Sendable {
    private enum Slot {
        case waiting, making
        case made(Output)
    }

    private struct State {
        var slots: [Slot]
        /// No item before this one is waiting.
        var next = 0
        var stopped = false

        /// Marks the first waiting item as being made, and returns it.
        mutating func claimNext() -> Int? {
            while next < slots.count {
                defer { next += 1 }
                if case .waiting = slots[next] {
                    slots[next] = .making
                    return next
                }
            }
            return nil
        }
    }

    private let state: Mutex<State>
    private let make: @Sendable (Int) -> Output
    /// Signalled once per output made, for a caller who waits.
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `workers` of the helpers on the items.
    fileprivate init(count: Int, workers: Int, make: @escaping @Sendable (Int) -> Output) {
        state = Mutex(State(slots: Array(repeating: .waiting, count: count)))
        self.make = make
        for helper in OnAllCores.helpers.prefix(workers) {
            helper.run { [weak self] in self?.work() }
        }
    }

    /// The output of item `index`, made by a worker or by the caller.
    func output(_ index: Int) -> Output {
        while true {
            let (done, claimed) = state.withLock { state -> (Output?, Int?) in
                switch state.slots[index] {
                case .made(let output):
                    return (output, nil)
                case .waiting:
                    state.slots[index] = .making
                    return (nil, index)
                case .making:
                    return (nil, state.claimNext())
                }
            }
            if let done { return done }
            if let claimed {
                finish(claimed)
            } else {
                finished.wait()
            }
        }
    }

    /// Makes every output not made yet, on the caller's thread.
    fileprivate func makeAll() {
        for index in 0..<state.withLock({ $0.slots.count }) { _ = output(index) }
    }

    /// Has the workers begin no more items, for a caller that needs no more; `output` still makes any it asks for.
    func stop() {
        state.withLock { $0.stopped = true }
    }

    private func work() {
        while let claimed = state.withLock({ $0.stopped ? nil : $0.claimNext() }) {
            finish(claimed)
        }
    }

    /// Makes a claimed item's output, and tells whoever waits.
    private func finish(_ index: Int) {
        let made = make(index)
        state.withLock { $0.slots[index] = .made(made) }
        finished.signal()
    }
}

/// The parts of one `OnAllCores.perform`: each is taken by whoever comes first, caller or helper.
private final class Parts: Sendable {
    private let count: Int
    private let body: @Sendable (Int) -> Void
    /// The next part no one took, and how many are done.
    private let progress = Mutex((next: 0, done: 0))
    /// Signalled when the last part is done.
    private let finished = DispatchSemaphore(value: 0)

    init(count: Int, body: @escaping @Sendable (Int) -> Void) {
        self.count = count
        self.body = body
    }

    /// Does parts until none is left to take.
    func takeAll() {
        while let part = progress.withLock({ state -> Int? in
            guard state.next < count else { return nil }
            defer { state.next += 1 }
            return state.next
        }) {
            body(part)
            let last = progress.withLock { state -> Bool in
                state.done += 1
                return state.done == count
            }
            if last { finished.signal() }
        }
    }

    func waitForAll() {
        if progress.withLock({ $0.done }) < count { finished.wait() }
    }
}

/// A value behind a lock, which closures that outlive a call can share.
private final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) {
        self.value = Mutex(value)
    }

    func withLock<T>(_ body: (inout Value) -> T) -> T {
        value.withLock { body(&$0) }
    }
}
