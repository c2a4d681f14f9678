import Foundation
import RecordStore

extension ChatClient {
    /// Runs `body` so that reads and writes on this thread give up on a locked shared file after a
    /// moment, with an error that ``isLockedOut(_:)`` recognises, instead of waiting for the lock.
    ///
    /// For a thread that must stay responsive, such as a full-screen client's:
    /// it says what it waits for and tries again, instead of freezing.
    public static func withoutWaitingForLocks<T>(_ body: () throws -> T) rethrows -> T {
        try LockPatience.brief(body)
    }

    /// Whether an error means another process holds the shared file locked, so the same call works later.
    public static func isLockedOut(_ error: any Error) -> Bool {
        (error as? StoreError)?.code == .zoneBusy
    }

    /// What a person reads for an error the chat threw: the message that says what would work.
    public static func describe(_ error: any Error) -> String {
        switch error {
        case let error as CommandError: error.message
        case let error as StoreError: error.message
        default: "\(error)"
        }
    }
}
