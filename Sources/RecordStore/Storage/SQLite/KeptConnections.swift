import GRDB
import Synchronization

/// Connections opened for one look (what a file is, the schema the migrations make) and closed after it,
/// kept rather than freed, up to `limit`.
///
/// Freeing a GRDB connection hands the clean-up of its queue to one of Dispatch's worker threads, and the
/// first job such a worker runs starts libdispatch's once-a-second timer for the rest of the process's
/// life (see `JobThread`). A client makes a few of these looks as it opens; a closed connection kept costs
/// a few kilobytes. A process that makes more (tests, an administrator's tool) frees the rest.
enum KeptConnections {
    static let limit = 32
    private static let kept = Mutex<[DatabaseQueue]>([])

    /// Closes `queue` and keeps it. One that would not close (a statement still open) is not kept: freed,
    /// GRDB closes it once SQLite can.
    static func close(_ queue: DatabaseQueue) throws {
        try queue.close()
        kept.withLock { kept in
            if kept.count < limit { kept.append(queue) }
        }
    }
}
