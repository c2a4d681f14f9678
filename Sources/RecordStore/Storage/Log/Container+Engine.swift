import Foundation

extension Container {
    /// The engine `container.json` names, refusing a client that asked for another.
    static func engine(of descriptor: ContainerDescriptor, wanted: StorageEngine?, url: URL) throws -> StorageEngine {
        let recorded = descriptor.engine ?? .sqlite
        if let wanted, wanted != recorded {
            throw StoreError(.badContainer, "The container \(url.path) keeps its public database in the \(recorded.rawValue) engine, but this client was asked for \(wanted.rawValue). Two engines on one container would each miss the other's messages; open it with --engine \(recorded.rawValue).")
        }
        return recorded
    }

    /// The server of a `postgresql` container, read from its descriptor; nil for the other engines.
    static func postgresEndpoint(of descriptor: ContainerDescriptor, engine: StorageEngine, url: URL) throws -> PostgresEndpoint? {
        guard engine == .postgresql else { return nil }
        guard let text = descriptor.postgresURL else {
            throw StoreError(.badContainer, "The container \(url.path) keeps its public database on PostgreSQL, but its \(ContainerDescriptor.fileName) names no server URL.")
        }
        return try PostgresEndpoint(url: text)
    }

    /// Rewrites this client's own log without what no reader needs (see `LogCompaction`), for a `log`
    /// container; returns its size in bytes before and after, or nil if there is no log of this client's to compact.
    @discardableResult
    public func compactOwnLog() throws -> (before: Int64, after: Int64)? {
        guard engine == .log, let storage = try ((publicDatabase.storage as? LazyStorage)?.storage() ?? publicDatabase.storage) as? LogStorage else {
            return nil
        }
        return try storage.compactOwnLog()
    }

    /// Appends saves of `records` to this client's log in a `log` container, leaving its own cache
    /// as it was: for benchmarks that need a long log quickly. Each record's creator is this client's user.
    package func appendToOwnLogUnapplied(_ records: [Record]) throws {
        guard engine == .log, let storage = try ((publicDatabase.storage as? LazyStorage)?.storage() ?? publicDatabase.storage) as? LogStorage else {
            throw StoreError(.internalError, "Only a log container has a log of its own to append to.")
        }
        try storage.appendUnapplied(records)
    }

    /// Reads what is new in the other clients' logs into this client's cache, for a `log` container;
    /// does nothing for a `sqlite` one. The sync engine's change signal does this on every poll.
    ///
    /// `progress` hears how far a long catch-up has got: nothing when there is little to read,
    /// otherwise once per step of `LogStorage.catchUpStep` entries and once at the end. It is called
    /// inside the cache's write transaction (a first catch-up is one), so it must not write to this container.
    @discardableResult
    public func refreshPublicDatabase(progress: ((CatchUpProgress) -> Void)? = nil) throws -> Int {
        guard engine == .log, let storage = try ((publicDatabase.storage as? LazyStorage)?.storage() ?? publicDatabase.storage) as? LogStorage else {
            return 0
        }
        var applied = 0
        var bytesRead: Int64 = 0
        var reporting = false
        // A first step no larger than a short wait tells whether the rest is worth a progress bar.
        return try storage.catchUp(firstLimit: progress == nil ? 200_000 : CatchUpProgress.threshold,
                                   limit: progress == nil ? 200_000 : LogStorage.catchUpStep) { result in
            applied += result.newEntries
            bytesRead += result.bytesRead
            if result.moreToRead { reporting = progress != nil }
            if reporting {
                progress?(CatchUpProgress(entries: applied, bytesRead: bytesRead, bytesTotal: bytesRead + result.bytesLeft, isDone: !result.moreToRead))
            }
        }
    }
}

/// How far a client has got in catching up with the logs, for a progress bar.
public struct CatchUpProgress: Sendable, Equatable {
    /// A poll with more entries than this to read shows its progress.
    public static let threshold = 10_000
    /// Entries read and applied so far.
    public var entries: Int
    /// Log bytes read so far, and those read and waiting together: the entries' count is known only once read.
    public var bytesRead: Int64
    public var bytesTotal: Int64
    /// Whether this is the last report: the client has read every log to its end.
    public var isDone: Bool

    /// The entries there are in all, reckoned from the bytes read so far.
    public var estimatedTotal: Int {
        guard !isDone, bytesRead > 0, bytesTotal > bytesRead else { return entries }
        return max(entries, Int((Double(entries) * Double(bytesTotal) / Double(bytesRead)).rounded()))
    }

    /// "catching up: 250,000 of 1,000,000"
    public var description: String {
        isDone ? "caught up: \(entries) entries" : "catching up: \(entries) of about \(estimatedTotal)"
    }
}
