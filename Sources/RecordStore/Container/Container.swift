import Foundation

/// A directory holding a shared public database, plus the current user's private database.
///
/// The public database is `public.sqlite` in the container directory, with
/// its assets in `assets/`. The private database lives in the user's own data
/// directory, `$XDG_DATA_HOME/<data directory>/<container id>/private.sqlite`,
/// mode 0600 in a 0700 directory; `Options.naming` names the data directory.
public final class Container: Sendable {
    /// How to open a container.
    public struct Options: Sendable {
        /// Overrides the journal mode that `statfs` would pick.
        public var mode: JournalMode?
        /// Create the container if the directory has none (one whose descriptor has gone is an error all the same).
        public var create = true
        /// Who may use the files of a container this open creates.
        public var access = ContainerAccess.umask
        /// Where private databases go; defaults to `$XDG_DATA_HOME/` and the naming's data directory.
        public var privateDataDirectory: URL?
        /// The program's names: its data directory, and the commands its errors suggest.
        public var naming = ContainerNaming()
        /// How many change-log entries each database keeps; older tokens expire.
        public var changeHistoryLimit = 100_000
        /// Open the public database on first use, so that a lock on it holds up nothing that needs only the private one.
        public var opensPublicDatabaseOnFirstUse = false
        /// The engine a container this open creates gets; when opening, the engine the container must have (nil: whichever it has).
        public var engine: StorageEngine?
        /// For a `postgresql` container this open creates: the server's URL, with no password in it.
        public var postgresURL: String?
        /// Refuse a `sqlite` container on a network filesystem (detected, not overridden with `mode = .local`),
        /// where one shared file loses messages; the error names `naming.migrateCommand`.
        public var refusesSingleFileOnNetwork = false

        public init(mode: JournalMode? = nil, create: Bool = true, privateDataDirectory: URL? = nil, naming: ContainerNaming = ContainerNaming()) {
            self.mode = mode
            self.create = create
            self.privateDataDirectory = privateDataDirectory
            self.naming = naming
        }
    }

    public let url: URL
    public let identifier: String
    public let mode: JournalMode
    /// The engine that holds the public database, as `container.json` records it.
    public let engine: StorageEngine
    public let currentUser: UserIdentity
    public let publicDatabase: RecordDatabase
    public let privateDatabase: RecordDatabase
    /// This user's keys and the published keys of others, for checking who wrote a record; nil when the
    /// private data directory could hold no key (the reason went to standard error).
    public let accountKeys: AccountKeys?

    /// The file in the container's directory whose attribute change is a quiet commit's bell (see
    /// ``QuietCommits``), or nil where commits ring no bells: network mode and the other engines.
    public var quietBellName: String? {
        engine == .sqlite && mode == .local ? ContainerDirectory.databaseName : nil
    }

    /// The folder whose own attribute change is a commit's bell, for a watcher to watch: `logs/` on the
    /// `log` engine, where each commit is appended to a log in a folder below it; the container's folder otherwise.
    public var bellDirectory: URL {
        engine == .log ? url.appendingPathComponent(LogDirectory.name, isDirectory: true) : url
    }

    /// The user record ID of whoever runs this process.
    public var currentUserRecordID: RecordID { currentUser.recordID }

    /// The directory of the embedded default container: the naming's data directory in `$XDG_DATA_HOME`.
    public static func defaultURL(naming: ContainerNaming = ContainerNaming()) -> URL {
        UserIdentity.current.dataHome.appendingPathComponent(naming.dataDirectoryName, isDirectory: true)
    }

    /// Opens the container at `url`, creating it if allowed.
    public init(url: URL, options: Options = Options()) throws {
        SchemaCheck.buildExpectedInBackground()
        let user = UserIdentity.current
        let descriptor = try ContainerDirectory.open(url, creating: options.create ? options.access : nil, naming: options.naming) {
            ContainerDescriptor.new(for: url, mode: options.mode, engine: options.engine, postgresURL: options.postgresURL)
        }
        if options.refusesSingleFileOnNetwork, options.mode != .local, (descriptor.engine ?? .sqlite) == .sqlite {
            let filesystem = Filesystem.detect(for: url)
            if filesystem.isNetwork {
                let migrate = options.naming.migrateCommand.map { "Convert it to the log engine with `\($0) \(url.path)`" } ?? "Convert it to the log engine"
                throw StoreError(.badContainer, "The container \(url.path) keeps its public database in one shared SQLite file, but it lives on \(filesystem.kind.name), a network filesystem, where one shared file loses or corrupts messages. \(migrate) (every member's queued messages are kept). If only this one mount ever uses it, open it with \(options.naming.choosing(.local)).")
            }
        }
        let detected = options.mode ?? JournalMode.detect(for: url)
        let publicPath = url.appendingPathComponent(ContainerDirectory.databaseName).path
        if descriptor.mode != detected {
            let reason = options.mode == nil ? "its filesystem looks like \(detected.rawValue) storage to this client" : "this client was asked for \(detected.rawValue) mode"
            throw StoreError(.badContainer, "The container \(url.path) was made for \(descriptor.mode.rawValue) mode, but \(reason). Mixing modes would corrupt it; open it with \(options.naming.choosing(descriptor.mode)) if that is right.")
        }

        self.url = url
        self.identifier = descriptor.identifier
        self.mode = descriptor.mode
        self.currentUser = user

        let assets = url.appendingPathComponent(ContainerDirectory.assetsName, isDirectory: true)
        let mode = descriptor.mode
        let naming = options.naming
        let privateRoot = options.privateDataDirectory ?? user.dataHome.appendingPathComponent(naming.dataDirectoryName, isDirectory: true)
        let privateDirectory = privateRoot.appendingPathComponent(descriptor.identifier, isDirectory: true)
        let engine = try Self.engine(of: descriptor, wanted: options.engine, url: url)
        self.engine = engine
        let endpoint = try Self.postgresEndpoint(of: descriptor, engine: engine, url: url)
        let open: @Sendable () throws -> any RecordStorage = { [engine, historyLimit = options.changeHistoryLimit] in
            switch engine {
            case .sqlite: return try SQLiteStorage(path: publicPath, assetsDirectory: assets, mode: mode, naming: naming, ringing: url)
            case .log: return try LogStorage(container: url, privateDirectory: privateDirectory, assetsDirectory: assets, user: user,
                                             historyLimit: historyLimit, naming: naming)
            case .postgresql:
                guard let endpoint else { throw StoreError(.badContainer, "The container \(url.path) names no PostgreSQL server.") }
                let storage = try PostgresStorage(endpoint: endpoint, assetsDirectory: assets, naming: naming)
                MigratedSubscription.carryOver(fromLogCacheIn: privateDirectory, account: user.recordID.recordName, into: storage, naming: naming)
                return storage
            }
        }
        // A server may be down when a client starts: it opens all the same, and its outbox keeps what it sends until the server answers.
        let lazily = options.opensPublicDatabaseOnFirstUse || engine == .postgresql
        let openPrivate: @Sendable () throws -> SQLiteStorage = { [historyLimit = options.changeHistoryLimit] in
            try Self.openPrivate(in: privateDirectory, historyLimit: historyLimit, naming: naming)
        }
        let privateStorage: SQLiteStorage, publicStorage: any RecordStorage
        if engine == .sqlite, !lazily {
            // Two files of their own, each opened and its schema checked in milliseconds: on two cores at once.
            (privateStorage, publicStorage) = try OnAllCores.both(openPrivate, open)
        } else {
            // The log engine keeps its cache in the private directory, which openPrivate makes.
            privateStorage = try openPrivate()
            publicStorage = lazily ? LazyStorage(open) : try open()
        }
        let keys = Self.accountKeys(container: url, engine: engine, privateRoot: privateRoot, user: user, naming: naming,
                                       publicStorage: publicStorage)
        accountKeys = keys
        publicDatabase = RecordDatabase(scope: .public, storage: publicStorage, assets: AssetStore(directory: assets, naming: naming),
                                        user: user, historyLimit: options.changeHistoryLimit, signer: keys?.own)

        privateDatabase = RecordDatabase(scope: .private, storage: privateStorage,
                                         assets: AssetStore(directory: privateDirectory.appendingPathComponent("assets", isDirectory: true), naming: naming),
                                         user: user, historyLimit: options.changeHistoryLimit)
    }

    /// Opens the private database, creating its 0700 directory and 0600 file first.
    private static func openPrivate(in directory: URL, historyLimit: Int, naming: ContainerNaming) throws -> SQLiteStorage {
        let fileManager = FileManager.default
        do {
            try fileManager.createDirectory(at: directory.appendingPathComponent("assets"), withIntermediateDirectories: true,
                                            attributes: [.posixPermissions: 0o700])
            try fileManager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        } catch {
            throw StoreError(.permissionFailure, "Cannot create the private data directory \(directory.path): \(error.localizedDescription)")
        }
        let path = directory.appendingPathComponent("private.sqlite").path
        let handle = try DirectoryHandle(path: directory.path, naming: naming)
        if try handle.status("private.sqlite") == nil {
            try DatabaseFile.create("private.sqlite", in: handle, mode: 0o600, group: nil)
        }
        return try SQLiteStorage(path: path, assetsDirectory: directory.appendingPathComponent("assets"),
                                 mode: JournalMode.detect(for: directory), naming: naming)
    }
}
