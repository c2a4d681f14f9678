import Foundation

/// Errors of the sync engine itself, as opposed to the store's.
public enum SyncError: Error, CustomStringConvertible, Sendable {
    /// A system call failed.
    case system(String, Int32)

    public var description: String {
        switch self {
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        }
    }
}
