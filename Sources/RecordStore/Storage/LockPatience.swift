import Foundation

/// How long work on the current thread or task keeps retrying a database another process holds locked.
///
/// The store retries a busy file until its own deadline (120 s), which suits
/// a background thread or a command. A thread that must stay responsive, such
/// as the full-screen client's, runs its work inside ``brief(_:)`` and gets a
/// transient `zoneBusy` error instead of the wait.
public enum LockPatience {
    /// A deadline shorter than the store's, in seconds, for the work running inside it; nil keeps the store's.
    @TaskLocal public static var deadline: TimeInterval?

    /// How long a thread that must not wait gives a lock before `zoneBusy`.
    public static let briefDeadline: TimeInterval = 0.2

    /// Runs `body` with reads and writes giving up after ``briefDeadline`` of retries on a locked file.
    public static func brief<T>(_ body: () throws -> T) rethrows -> T {
        try $deadline.withValue(briefDeadline, operation: body)
    }
}
