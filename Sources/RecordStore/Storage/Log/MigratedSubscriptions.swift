import Foundation
import GRDB

/// One subscription that `migrate-to-logs` found in the shared file, as its body was stored there.
///
/// The log engine keeps subscriptions in each client's own cache, which the migration cannot reach,
/// so it writes each account's subscriptions into that account's log folder (`fileName`), which only
/// the account may write. Each of the account's clients takes them into its cache once.
struct MigratedSubscription: Codable, Equatable {
    static let fileName = "subscriptions.migrated"
    /// A file larger than this is not read: a thousand subscriptions at their largest stored size fit.
    static let maximumFileSize = 1000 * (Subscription.maximumStoredSize + 512)
    /// The `fatchat_meta` key that remembers which version of the file the cache took.
    static let takenKey = "migrated_subscriptions"

    var id: String
    var body: String

    /// Takes the subscriptions in `folder` (this account's own) into `cache`, once for each content of the file;
    /// returns how many it took. A subscription that does not decode is skipped and reported as a damaged row.
    /// `ownersAreMeaningful`: the filesystem reports true owners, and a file this user does not own is left alone.
    /// Call it once the cache has caught up, so that a subscription finds the channel it belongs to.
    static func take(from folder: DirectoryHandle, account: String, into cache: SQLiteStorage, ownersAreMeaningful: Bool) throws -> Int {
        guard try folder.status(fileName) != nil else { return 0 }
        let fd = try folder.openRegularFile(fileName)
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, !ownersAreMeaningful || info.st_uid == geteuid() else { return 0 }
        let path = folder.path(of: fileName)
        guard info.st_size <= maximumFileSize else {
            DamagedRowLog.note(DamagedRow(table: fileName, key: path, problem: "it is \(info.st_size) bytes, more than the \(maximumFileSize) read"))
            return 0
        }
        let data = try IdentityKeys.readAll(fd, limit: maximumFileSize)
        // Known by its content: a network mount's device and inode numbers may change when it is mounted again.
        var hash = SHA256()
        hash.update(data)
        let version = hash.finalize()
        var stored: [MigratedSubscription] = []
        do {
            stored = try JSONDecoder().decode([MigratedSubscription].self, from: data)
        } catch {
            DamagedRowLog.note(DamagedRow(table: fileName, key: path, problem: "it is not a list of subscriptions"))
        }
        return try cache.write { writer in
            guard let access = writer as? SQLiteAccess else {
                throw StoreError(.internalError, "The log engine's cache handed out a writer it does not know.")
            }
            let taken = try String.fetchOne(access.db, sql: "SELECT value FROM fatchat_meta WHERE key = ?", arguments: [takenKey])
            guard taken != version else { return 0 }
            var count = 0
            for item in stored {
                do {
                    let subscription = try Subscription(storedID: item.id, body: item.body, owner: account)
                    try access.saveSubscription(id: item.id, owner: account, body: item.body, parent: subscription.parent)
                    count += 1
                } catch let damage as DamagedRow {
                    DamagedRowLog.note(damage)
                }
            }
            try access.db.execute(sql: "INSERT INTO fatchat_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                  arguments: [takenKey, version])
            return count
        }
    }

    /// After `admin migrate` moved a `log` container to PostgreSQL: saves on the server, as `account`, the
    /// subscriptions of that account that the client's old cache in `directory` holds, then renames that
    /// cache (to `log-cache.sqlite.moved`) so that it happens once. The migration could not reach them: each
    /// client kept its own. Only the account's first client to open the server carries them: once the server
    /// holds any subscription of the account, another machine's old cache would only bring back what was
    /// deleted or changed since. A failure (the server gone again, say) leaves the cache for the next start.
    static func carryOver(fromLogCacheIn directory: URL, account: String, into storage: any RecordStorage, naming: ContainerNaming) {
        guard let handle = try? DirectoryHandle(path: directory.path, naming: naming),
              (try? handle.status(LogStorage.cacheName)) != nil else { return }
        do {
            let stored = try subscriptions(inLogCache: directory.appendingPathComponent(LogStorage.cacheName), account: account, naming: naming)
            try storage.write { writer in
                guard try writer.subscriptionBodies(owner: account).isEmpty else { return }
                for (subscription, body) in stored {
                    try writer.saveSubscription(id: subscription.subscriptionID, owner: account, body: body, parent: subscription.parent)
                }
            }
            // A cache moved aside by an earlier move to a server is older still: this one takes its place.
            for suffix in ["", "-wal", "-shm"] where try handle.status(LogStorage.cacheName + suffix) != nil {
                try handle.rename(LogStorage.cacheName + suffix, to: LogStorage.cacheName + ".moved" + suffix)
            }
        } catch {
            return
        }
    }

    /// The subscriptions of `account` that decode in a log cache; the cache is closed again when this returns.
    private static func subscriptions(inLogCache url: URL, account: String, naming: ContainerNaming) throws -> [(Subscription, String)] {
        // Only subscriptions are read, so no asset is opened; the folder named is the private data's own.
        let cache = try SQLiteStorage(path: url.path, assetsDirectory: url.deletingLastPathComponent().appendingPathComponent("assets"),
                                      mode: .local, naming: naming)
        return try cache.read { try $0.subscriptionBodies(owner: account) }.compactMap { stored in
            (try? Subscription(storedID: stored.id, body: stored.body, owner: account)).map { ($0, stored.body) }
        }
    }
}
