import Foundation

/// What a container is, read without opening its databases: for a program's `doctor`, which must work
/// on a container that clients refuse to open.
public struct ContainerSummary: Sendable, Equatable {
    public var url: URL
    public var identifier: String
    /// The journal mode `container.json` records.
    public var mode: JournalMode
    /// The engine `container.json` records (a descriptor from before engines were recorded means `sqlite`).
    public var engine: StorageEngine
    /// Log files in `logs/`, each one client that wrote; zero for a `sqlite` container.
    public var logWriters: Int
    /// Account folders in `logs/` whose names have the expected shape.
    public var logAccounts: Int
    /// Whether `public.sqlite` is there.
    public var hasSharedFile: Bool

    public init(url: URL, identifier: String, mode: JournalMode, engine: StorageEngine, logWriters: Int, logAccounts: Int, hasSharedFile: Bool) {
        self.url = url
        self.identifier = identifier
        self.mode = mode
        self.engine = engine
        self.logWriters = logWriters
        self.logAccounts = logAccounts
        self.hasSharedFile = hasSharedFile
    }

    /// Reads `container.json` and lists `logs/` in `url`; changes nothing.
    public static func read(_ url: URL, naming: ContainerNaming = ContainerNaming()) throws -> ContainerSummary {
        let directory = try DirectoryHandle(path: url.path, followingLink: true, naming: naming)
        guard let descriptor = try ContainerDescriptor.read(in: directory, naming: naming) else {
            throw StoreError(.badContainer, "\(url.path) is not a \(naming.programName) container (it has no \(ContainerDescriptor.fileName)). Make one with \(naming.creating(url.path)).")
        }
        var writers = 0
        var accounts = 0
        if try directory.status(LogDirectory.name) != nil {
            let logs = try directory.directory(LogDirectory.name)
            for account in try LogDirectory.names(in: logs) where LogDirectory.uid(inAccount: account) != nil {
                guard let folder = try? logs.directory(account) else { continue }
                accounts += 1
                writers += ((try? LogDirectory.names(in: folder)) ?? []).filter { LogDirectory.client(inFileName: $0) != nil }.count
            }
        }
        return ContainerSummary(url: url, identifier: descriptor.identifier, mode: descriptor.mode, engine: descriptor.engine ?? .sqlite,
                                logWriters: writers, logAccounts: accounts,
                                hasSharedFile: try directory.status(ContainerDirectory.databaseName) != nil)
    }
}
