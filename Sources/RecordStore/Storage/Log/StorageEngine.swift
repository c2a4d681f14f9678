/// Which engine holds a container's public database; `container.json` records it, and every client must use it.
public enum StorageEngine: String, Sendable, Codable, CaseIterable {
    /// One shared SQLite file.
    case sqlite
    /// One append-only log per writing client, replayed by each client into a SQLite cache of its own.
    case log
    /// A PostgreSQL server, named by the URL in `container.json`; assets and the private database stay local.
    case postgresql
}
