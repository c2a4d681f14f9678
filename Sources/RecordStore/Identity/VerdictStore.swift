import Crypto
import Foundation
import GRDB
import Synchronization

/// Signature verdicts kept on disk, in the user's private data directory, so that a message checked once
/// (when it arrived, or when a page showed it) is not checked again by the next process.
///
/// A verdict is keyed by a SHA-256 of the key, the signature and the signed bytes, so it states a fact
/// that holds in any container: a changed message or a new key is a new key here. The file is the user's
/// own (0600, in their private directory); losing it, or any failure to read or write it, only costs
/// checking signatures again, so every error is swallowed. It keeps at most `capacity` verdicts.
final class VerdictStore: Sendable {
    static let fileName = "verdicts.sqlite"
    static let capacity = 1_000_000

    private let directory: URL
    private let naming: ContainerNaming
    /// The open file; `nil` until first used, and for good once it could not be opened.
    private let pool = Mutex<(tried: Bool, pool: DatabasePool?)>((false, nil))
    /// Verdicts are written here, after the page that needed them is shown: they are in memory meanwhile.
    private let writer = JobThread(name: "fatchat.verdicts")
    /// Held through each write, so that `flush` returns only once a write under way is done.
    private let writing = Mutex(())
    /// Verdicts waiting to be written.
    private let pending = Mutex<[(digest: Data, verified: Bool)]>([])

    init(directory: URL, naming: ContainerNaming) {
        self.directory = directory
        self.naming = naming
    }

    /// The key a verdict is kept under.
    static func digest(message: Data, signature: Data, key: Data) -> Data {
        var hasher = Crypto.SHA256()
        for part in [key, signature, message] {
            withUnsafeBytes(of: UInt64(part.count).littleEndian) { hasher.update(bufferPointer: $0) }
            hasher.update(data: part)
        }
        return Data(hasher.finalize())
    }

    /// The kept verdicts among `digests`.
    func verdicts(_ digests: [Data]) -> [Data: SignatureCheck] {
        guard !digests.isEmpty, let pool = open() else { return [:] }
        let found = try? pool.read { db -> [Data: SignatureCheck] in
            var found: [Data: SignatureCheck] = [:]
            // A page at a time, well under SQLite's limit on parameters.
            for start in stride(from: 0, to: digests.count, by: 500) {
                let part = Array(digests[start..<min(start + 500, digests.count)])
                let marks = Array(repeating: "?", count: part.count).joined(separator: ",")
                let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT digest, verified FROM verdict WHERE digest IN (\(marks))"),
                                               arguments: StatementArguments(part))
                while let row = try rows.next() {
                    guard let digest = Data.fromDatabaseValue(row[0]), let verified = Int64.fromDatabaseValue(row[1]) else { continue }
                    found[digest] = verified == 1 ? .verified : .badSignature
                }
            }
            return found
        }
        return found ?? [:]
    }

    /// Keeps verdicts, on a thread of its own; only `verified` and `badSignature` mean anything here.
    /// `soon`: written at once (a page's); else a moment later, so that the verdicts of messages arriving
    /// one by one share a transaction.
    func remember(_ verdicts: [(digest: Data, outcome: SignatureCheck)], soon: Bool) {
        let kept = verdicts.filter { $0.outcome == .verified || $0.outcome == .badSignature }.map { ($0.digest, $0.outcome == .verified) }
        guard !kept.isEmpty else { return }
        let first = pending.withLock { pending in
            defer { pending += kept }
            return pending.isEmpty
        }
        if soon {
            writer.run { self.writePending() }
        } else if first {
            writer.run(after: Self.writeDelay) { self.writePending() }
        }
    }

    /// How long verdicts wait to be written together, in seconds.
    static let writeDelay = 0.5

    /// Writes the verdicts handed to `remember` so far (or drops them, if the file cannot be written), and waits for it.
    func flush() {
        writePending()
    }

    private func writePending() {
        writing.withLock { _ in
            let kept = pending.withLock { pending in
                defer { pending = [] }
                return pending
            }
            guard !kept.isEmpty, let pool = open() else { return }
            write(kept, to: pool)
        }
    }

    private func write(_ kept: [(digest: Data, verified: Bool)], to pool: DatabasePool) {
        try? pool.write { db in
            for verdict in kept {
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO verdict (digest, verified) VALUES (?, ?)")
                    .execute(arguments: [verdict.digest, verdict.verified])
            }
            // The oldest go first once there are too many.
            try db.cachedStatement(sql: "DELETE FROM verdict WHERE id <= (SELECT max(id) FROM verdict) - ?").execute(arguments: [Self.capacity])
        }
    }

    private func open() -> DatabasePool? {
        pool.withLock { state in
            if state.tried { return state.pool }
            state.tried = true
            state.pool = try? makePool()
            return state.pool
        }
    }

    private func makePool() throws -> DatabasePool {
        let handle = try DirectoryHandle(path: directory.path, naming: naming)
        if try handle.status(Self.fileName) == nil {
            close(try handle.createFile(Self.fileName, mode: 0o600, group: nil))
        }
        var config = Configuration()
        // Another process of this user may be writing; a verdict not kept is only checked again.
        config.busyMode = .timeout(0.05)
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        let pool = try DatabasePool(path: handle.path(of: Self.fileName), configuration: config)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS verdict (id INTEGER PRIMARY KEY, digest BLOB NOT NULL UNIQUE, verified INTEGER NOT NULL)")
        }
        return pool
    }
}
