import Foundation
import Synchronization

/// Work whose items are independent and each costs tens of microseconds (an Ed25519 signature made or
/// checked), spread over the machine's cores when there are enough items to pay for waking the workers.
enum OnAllCores {
    /// Fewer items than this per worker are done on the caller's thread: waking a worker costs more.
    static let itemsPerWorker = 8

    /// `transform` of each item, in order. `transform` must be safe to call from several threads at once.
    static func map<Item: Sendable, Result: Sendable>(_ items: [Item], _ transform: @Sendable (Item) -> Result) -> [Result] {
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, items.count / itemsPerWorker)
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
}
