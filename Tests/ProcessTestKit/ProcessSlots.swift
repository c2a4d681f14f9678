import Foundation
import Testing

/// A test that starts other processes (clients in tmux, bots, writers, servers) and waits for them.
///
/// Swift Testing starts every test at once, so without a limit thirty such tests would start
/// a hundred processes together on a two-core machine, and each would see the others' load
/// as its own slowness: a client that takes 20 s to draw its first frame. With this trait a
/// test case runs only while it holds one of a few slots, as many as the machine has cores
/// (at least two), or `FATCHAT_TEST_PROCESS_SLOTS`. Tests that run in this process alone
/// are not limited.
public struct StartsProcesses: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    /// Each test case takes a slot of its own; a test or suite as a whole takes none, so
    /// that nothing waits for a slot its own caller holds.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> StartsProcesses? {
        testCase == nil ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        // A test in a nested suite may be given the trait twice; it holds one slot.
        if ProcessSlots.held { return try await function() }
        await ProcessSlots.shared.take()
        do {
            try await ProcessSlots.$held.withValue(true, operation: function)
        } catch {
            await ProcessSlots.shared.give()
            throw error
        }
        await ProcessSlots.shared.give()
    }
}

extension Trait where Self == StartsProcesses {
    /// The test starts other processes: it runs only while it holds one of a few slots.
    public static var startsProcesses: StartsProcesses { StartsProcesses() }
}

/// A counting semaphore for tests, first come first served.
actor ProcessSlots {
    static let shared = ProcessSlots(count: slotCount())

    /// Whether the running test already holds a slot.
    @TaskLocal static var held = false

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) { free = count }

    func take() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func give() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }

    private static func slotCount() -> Int {
        if let text = ProcessInfo.processInfo.environment["FATCHAT_TEST_PROCESS_SLOTS"], let count = Int(text), count > 0 {
            return count
        }
        return max(2, ProcessInfo.processInfo.activeProcessorCount)
    }
}
