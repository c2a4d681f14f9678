import Foundation
import GRDB

extension StoreError {
    /// Translates SQLite's errors into `StoreError`s a person can act on; other errors pass through.
    static func translating(_ error: any Error, path: String) -> any Error {
        if let db = error as? DatabaseError { return from(db, path: path) }
        // Opening a pool, GRDB looks at the `-wal` file by name; a container moved away at that moment
        // makes Foundation throw "no such file", which is the container being away, not a fault.
        let foundation = error as NSError
        if foundation.domain == NSCocoaErrorDomain, [CocoaError.fileNoSuchFile.rawValue, CocoaError.fileReadNoSuchFile.rawValue].contains(foundation.code) {
            return StoreError(.serviceUnavailable, "\(path) went away while it was being opened; the container may be unmounted or moved. Changes wait until it is back.")
        }
        return error
    }

    /// Translates an SQLite error into a code and message a person can act on.
    static func from(_ db: DatabaseError, path: String) -> StoreError {
        switch db.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StoreError(.zoneBusy, "\(path) stayed locked by another process past the timeout; try again.")
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return StoreError(.badDatabase, "\(path) is not a usable SQLite database (\(db.message ?? "damaged")); it was left untouched. Restore it from a backup or point the container elsewhere.")
        case .SQLITE_READONLY:
            return StoreError(.serviceUnavailable, "\(path) is read-only right now; changes wait until it is writable again.")
        case .SQLITE_CANTOPEN:
            return StoreError(.serviceUnavailable, "\(path) cannot be opened; is the container there, and mounted?")
        case .SQLITE_IOERR:
            return StoreError(.serviceUnavailable, "I/O error on \(path) (\(db.extendedResultCode)); the filesystem may be unavailable.")
        case .SQLITE_FULL:
            return StoreError(.quotaExceeded, "The disk holding \(path) is full.")
        case .SQLITE_TOOBIG:
            return StoreError(.limitExceeded, "A value is too large for SQLite.")
        case .SQLITE_PERM, .SQLITE_AUTH:
            return StoreError(.permissionFailure, "Not allowed to use \(path): \(db.message ?? "permission denied").")
        default:
            return StoreError(.internalError, "SQLite error on \(path): \(db.message ?? "\(db.resultCode)")")
        }
    }
}
