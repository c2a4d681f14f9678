import Foundation

/// Waits until `condition` holds or `timeout` passes, looking every 50 ms; whether it held.
///
/// A task that wakes past the deadline, as on a busy machine, looks once more before it answers.
public func waitUntil(timeout: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return condition()
}
