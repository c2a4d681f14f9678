import Foundation
import Synchronization

/// Where the public keys of a container's accounts are published, each where only its account can write.
///
/// - `sqlite` engine: `keys/<account>.pub`, a file its account owns inside a
///   sticky, setgid `keys/` folder (nobody can replace or remove another's file);
/// - `log` engine: `logs/<account>/identity.pub`, in the account's own log folder;
/// - `postgresql` engine: a row of the server's key table that the account's role owns
///   (`PostgresKeyTable`); a key that cannot be published while the server is
///   down is published on a later look-up.
///
/// A reader takes only names of the account shape, opens them relative to
/// their folder without following a symlink, and believes a file only if
/// `fstat` shows it is owned by the uid the account's name carries (where the
/// filesystem reports owners at all: some network mounts map every file to one
/// account, and there a key is taken as it is).
final class KeyDirectory: Sendable {
    static let name = "keys"
    static let suffix = ".pub"
    static let logFileName = "identity.pub"

    let engine: StorageEngine
    private let container: URL
    private let naming: ContainerNaming
    /// Whether owners are checked: the filesystem showed this account's own key file as its own.
    private let checksOwners = Atomic<Bool>(true)
    /// The public database, which keeps the keys itself on a database server.
    private let storage: (any RecordStorage)?
    /// How many key files or rows `key(of:)` has read, for tests.
    private let reads = Atomic<Int>(0)
    /// This account's key while the server could not take it yet, and when to try again.
    private let unpublished = Mutex<(identity: PublicIdentity, retry: Date)?>(nil)

    init(container: URL, engine: StorageEngine, naming: ContainerNaming, storage: (any RecordStorage)? = nil) {
        self.container = container
        self.engine = engine
        self.naming = naming
        self.storage = storage
    }

    /// Publishes `identity` in the container, unless it is there already.
    func publish(_ identity: PublicIdentity) throws {
        if engine == .postgresql { return try publishRow(identity) }
        let (folder, file) = try Self.ownPlace(container: container, engine: engine, account: identity.account, naming: naming)
        let text = Data(identity.encoded.utf8)
        if try Self.contents(of: file, in: folder) != text {
            try Self.write(text, as: file, in: folder)
        }
        checksOwners.store(try folder.status(file)?.st_uid == geteuid(), ordering: .relaxed)
    }

    /// The folder and file name that hold `account`'s own key, making the folder if needed.
    private static func ownPlace(container: URL, engine: StorageEngine, account: String, naming: ContainerNaming) throws -> (DirectoryHandle, String) {
        let handle = try DirectoryHandle(path: container.path, followingLink: true, naming: naming)
        let filesystem = Filesystem.detect(for: container).kind
        switch engine {
        case .sqlite:
            return (try handle.stickyDirectory(name, harm: "replace another's key", modesAreMeaningful: filesystem.showsOwnersAndModes),
                    account + suffix)
        case .log:
            let logs = try LogDirectory.open(in: handle, filesystem: filesystem)
            return (try LogDirectory.ownDirectory(in: logs, account: account).0, logFileName)
        case .postgresql:
            throw StoreError(.internalError, "A postgresql container keeps keys on its server, not in \(container.path).")
        }
    }

    /// Publishes `identity` as a row on the server; a server that does not answer gets it on a later look-up.
    private func publishRow(_ identity: PublicIdentity) throws {
        do {
            guard let table = try storage?.keyTable() else {
                throw StoreError(.internalError, "The postgresql container has no key table.")
            }
            try table.publish(account: identity.account, text: Data(identity.encoded.utf8))
            unpublished.withLock { $0 = nil }
        } catch let error as StoreError where error.code == .serviceUnavailable {
            unpublished.withLock { $0 = (identity, Date().addingTimeInterval(10)) }
        }
    }

    /// Tries again to publish this account's key, if the server was down when it was first published.
    private func publishIfDue() {
        let due = unpublished.withLock { pending -> PublicIdentity? in
            guard let identity = pending?.identity, let retry = pending?.retry, retry <= Date() else { return nil }
            pending = (identity, Date().addingTimeInterval(10))
            return identity
        }
        if let due { try? publishRow(due) }
    }

    /// Writes a key file under a temporary name and renames it over the old one, readable where the folder is.
    private static func write(_ text: Data, as file: String, in folder: DirectoryHandle) throws {
        let temporary = ".\(file).\(getpid()).tmp"
        folder.remove(temporary)
        let mode = (try folder.status().st_mode & 0o044) | 0o600
        let fd = try folder.createFile(temporary, mode: mode, group: nil)
        let written = text.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == text.count, synced else {
            folder.remove(temporary)
            throw StoreError(.serviceUnavailable, "Cannot write \(folder.path(of: file)): \(DirectoryHandle.reason(errno)).")
        }
        do {
            try folder.rename(temporary, to: file)
        } catch {
            folder.remove(temporary)
            throw StoreError(.permissionFailure, "Cannot publish your key as \(folder.path(of: file)): someone else's file may hold that name. Ask the container's owner to remove it.")
        }
    }

    /// A key file's bytes, or nil when there is none; at most a little more than `PublicIdentity.maximumSize`.
    private static func contents(of file: String, in folder: DirectoryHandle, owner: uid_t? = nil) throws -> Data? {
        guard try folder.status(file) != nil else { return nil }
        let fd = try folder.openRegularFile(file)
        defer { close(fd) }
        if let owner {
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_uid == owner else { return nil }
        }
        return try IdentityKeys.readAll(fd, limit: PublicIdentity.maximumSize)
    }

    /// How many key files or rows `key(of:)` has read so far.
    var keyReads: Int { reads.load(ordering: .relaxed) }

    /// What `lstat` shows of the file that holds `account`'s key (and, on the `log` engine, of its
    /// folder): the same stamp again means the same file, unchanged since. `nil` on a database server,
    /// for a name not of the account shape, or for a file that is not there.
    ///
    /// Nothing is opened: the stamp only tells a caller whether to read the key again.
    func stamp(of account: String) -> KeyStamp? {
        guard engine != .postgresql, LogDirectory.uid(inAccount: account) != nil else { return nil }
        let paths = engine == .sqlite
            ? ["\(container.path)/\(Self.name)/\(account)\(Self.suffix)"]
            : ["\(container.path)/\(LogDirectory.name)/\(account)", "\(container.path)/\(LogDirectory.name)/\(account)/\(Self.logFileName)"]
        var looks: [KeyStamp.Look] = []
        for path in paths {
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            looks.append(KeyStamp.Look(file: FileStamp(info), changed: info.st_ctim.tv_sec, changedNanoseconds: info.st_ctim.tv_nsec))
        }
        return KeyStamp(looks: looks)
    }

    /// The key `account` published, or nil when there is none that can be believed.
    ///
    /// `account` comes from a record's creator, so it is someone's input: only the
    /// `_<uid>_<name>` shape is used, and never as more than one path component.
    func key(of account: String) -> PublicIdentity? {
        guard let uid = LogDirectory.uid(inAccount: account) else { return nil }
        reads.add(1, ordering: .relaxed)
        do {
            let handle = try DirectoryHandle(path: container.path, followingLink: true, naming: naming)
            let folder: DirectoryHandle
            let file: String
            switch engine {
            case .sqlite:
                folder = try handle.directory(Self.name)
                file = account + Self.suffix
            case .log:
                folder = try handle.directory(LogDirectory.name).directory(account)
                if checksOwners.load(ordering: .relaxed), try folder.status().st_uid != uid { return nil }
                file = Self.logFileName
            case .postgresql:
                publishIfDue()
                guard let bytes = try storage?.keyTable()?.text(of: account) else { return nil }
                return PublicIdentity.parse(bytes, account: account)
            }
            guard let bytes = try Self.contents(of: file, in: folder, owner: checksOwners.load(ordering: .relaxed) ? uid : nil) else { return nil }
            return PublicIdentity.parse(bytes, account: account)
        } catch {
            return nil
        }
    }

    /// The accounts that published a key whose user name is `userName`, or whose whole account name it is.
    func accounts(named userName: String) -> [String] {
        Self.accounts(in: publishedAccounts(endingWith: userName), named: userName)
    }

    /// Every account with a key file in the container (the `sqlite` and `log` engines), for a migration to a server.
    func fileAccounts() -> [String] {
        engine == .postgresql ? [] : publishedAccounts(endingWith: "").filter { LogDirectory.uid(inAccount: $0) != nil }.sorted()
    }

    /// Every account with a published key, or (on a server) those whose name ends in `userName`.
    private func publishedAccounts(endingWith userName: String) -> [String] {
        if engine == .postgresql {
            publishIfDue()
            return (try? storage?.keyTable()?.accounts(endingWith: userName)) ?? []
        }
        guard let handle = try? DirectoryHandle(path: container.path, followingLink: true, naming: naming) else { return [] }
        let folderName = engine == .sqlite ? Self.name : LogDirectory.name
        guard let folder = try? handle.directory(folderName), let listed = try? LogDirectory.names(in: folder) else { return [] }
        return engine == .sqlite ? listed.filter { $0.hasSuffix(Self.suffix) }.map { String($0.dropLast(Self.suffix.count)) } : listed
    }

    /// The account names among `names` whose user name, or whole name, is `userName`.
    private static func accounts(in names: [String], named userName: String) -> [String] {
        names.filter { name in
            guard let uid = LogDirectory.uid(inAccount: name) else { return false }
            return name == userName || name == "_\(uid)_\(userName)"
        }.sorted()
    }
}

/// What `KeyDirectory.stamp(of:)` saw of a key's file (and folder): each one's `FileStamp`, and its
/// change time, which also moves when an owner rewrites the file and sets its modification time back,
/// or when it is given to another owner.
struct KeyStamp: Equatable, Sendable {
    struct Look: Equatable, Sendable {
        var file: FileStamp
        var changed: Int
        var changedNanoseconds: Int
    }
    var looks: [Look]
}
