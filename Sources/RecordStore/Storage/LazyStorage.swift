import Foundation
import Synchronization

/// A storage that opens the real one on first use.
///
/// Opening a public database can write (SQLite's WAL set-up, a migration),
/// and so wait on another process's lock. With this, a process can use its
/// private database and outbox first; whichever thread first reads or writes
/// the public database pays for opening it, and a failure to open is thrown
/// there, and tried again next time.
final class LazyStorage: RecordStorage {
    private let open: @Sendable () throws -> any RecordStorage
    private let opened = Mutex<(any RecordStorage)?>(nil)

    init(_ open: @escaping @Sendable () throws -> any RecordStorage) {
        self.open = open
    }

    /// The real storage; the lock is held while opening, so two threads never open it twice.
    func storage() throws -> any RecordStorage {
        try opened.withLock { opened in
            if let opened { return opened }
            let storage = try open()
            opened = storage
            return storage
        }
    }

    /// Read inside `read` and `write` only, where the storage is open.
    var databaseID: String { (try? storage().databaseID) ?? "" }

    func read<T>(_ body: (any StorageReader) throws -> T) throws -> T { try storage().read(body) }

    func write<T>(_ body: (any StorageWriter) throws -> T) throws -> T { try storage().write(body) }

    func makeChangeSignal() throws -> any StorageChangeSignal { try storage().makeChangeSignal() }

    func changesWithBounds(after sequence: Int64, zone: String?, limit: Int) throws -> (bounds: ChangeBounds, scan: ChangeScan?) {
        try storage().changesWithBounds(after: sequence, zone: zone, limit: limit)
    }

    func keyTable() throws -> (any PublishedKeyTable)? { try storage().keyTable() }
}
