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

    /// Rewrites this client's own log without what no reader needs (see `LogCompaction`), for a `log`
    /// container; returns its size in bytes before and after, or nil if there is no log of this client's to compact.
    @discardableResult
    public func compactOwnLog() throws -> (before: Int64, after: Int64)? {
        guard engine == .log, let storage = try ((publicDatabase.storage as? LazyStorage)?.storage() ?? publicDatabase.storage) as? LogStorage else {
            return nil
        }
        return try storage.compactOwnLog()
    }

    /// Reads what is new in the other clients' logs into this client's cache, for a `log` container;
    /// does nothing for a `sqlite` one. The sync engine's change signal does this on every poll.
    @discardableResult
    public func refreshPublicDatabase() throws -> Int {
        guard engine == .log, let storage = try ((publicDatabase.storage as? LazyStorage)?.storage() ?? publicDatabase.storage) as? LogStorage else {
            return 0
        }
        var applied = 0
        while true {
            let result = try storage.refresh()
            applied += result.newEntries
            if !result.moreToRead { return applied }
        }
    }
}
