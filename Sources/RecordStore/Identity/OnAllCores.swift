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

    /// `transform` of each item, in order. `transform` must be safe to call from several threads at once.
    static func map<Item: Sendable, Result: Sendable>(_ items: [Item], _ transform: @Sendable (Item) -> Result) -> [Result] {
        let workers = min(cores, items.count / itemsPerWorker)
        guard workers > 1 else { return items.map(transform) }
        let results = Mutex<[Int: Result]>([:])
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let mine = stride(from: worker, to: items.count, by: workers).map { ($0, transform(items[$0])) }
            results.withLock { all in
                for (index, result) in mine { all[index] = result }
            }
        }
        return results.withLock { all in items.indices.compactMap { all[$0] } }
    }

    /// `first` and `second` at once: the caller runs one, and another core the other if one is free.
    ///
    /// Both run to their end. `first`'s error is thrown before `second`'s, as if they had run in turn.
    /// Both must be safe to run beside each other. Each keeps the caller's ``LockPatience``, whichever
    /// thread runs it: a thread that must not wait on a locked file must not wait through another.
    public static func both<A: Sendable, B: Sendable>(_ first: @Sendable () throws -> A, _ second: @Sendable () throws -> B) throws -> (A, B) {
        let firstResult = Mutex<Result<A, any Error>?>(nil), secondResult = Mutex<Result<B, any Error>?>(nil)
        let patience = LockPatience.deadline
        DispatchQueue.concurrentPerform(iterations: 2) { index in
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
