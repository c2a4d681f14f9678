import Foundation
import GRDB
import Synchronization

extension SQLiteStorage {
    /// Local mode: `PRAGMA data_version` on a dedicated connection. Network
    /// mode: the newest change sequence, read through a fresh connection.
    func makeChangeSignal() throws -> any StorageChangeSignal {
        guard let local = connections as? LocalConnections else { return makeSequenceSignal() }
        return try DataVersionSignal(path: local.path)
    }
}

/// Watches `PRAGMA data_version` on its own read-only connection, which
/// changes whenever any other connection commits.
final class DataVersionSignal: StorageChangeSignal {
    private let queue: DatabaseQueue
    private let last = Mutex<Int64?>(nil)

    init(path: String) throws {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(1)
        do {
            queue = try DatabaseQueue(path: path, configuration: config)
        } catch {
            throw StoreError.translating(error, path: path)
        }
    }

    func hasChanged() throws -> Bool {
        let version = try queue.inDatabase { try Int64.fetchOne($0.cachedStatement(sql: "PRAGMA data_version")) }
        return last.withLock { previous in
            defer { previous = version }
            return previous != version
        }
    }
}
