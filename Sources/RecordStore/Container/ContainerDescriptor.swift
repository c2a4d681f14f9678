import Foundation

/// `container.json`: the container's identity and the journal mode every client must use.
struct ContainerDescriptor: Codable, Equatable {
    static let fileName = "container.json"
    /// Far more than a descriptor needs; a bigger file is not read into memory.
    static let maximumSize = 64 * 1024

    var identifier: String
    var mode: JournalMode
    var created: Date
    /// The engine of the public database; a descriptor from before engines were recorded means SQLite.
    var engine: StorageEngine?
    /// For the `postgresql` engine: the server's URL, without credentials (`PostgresEndpoint` refuses a password).
    var postgresURL: String?

    /// A new identity for a container being made in `url`, in `mode` or the one its filesystem calls for.
    static func new(for url: URL, mode: JournalMode?, engine: StorageEngine? = nil, postgresURL: String? = nil) -> ContainerDescriptor {
        ContainerDescriptor(identifier: UUID().uuidString, mode: mode ?? JournalMode.detect(for: url), created: Date(),
                            engine: engine ?? .sqlite, postgresURL: engine == .postgresql ? postgresURL : nil)
    }

    /// Writes the descriptor, unless another process wrote one first; returns the one that is there.
    ///
    /// It is written aside, then `link(2)`ed into place, which fails if
    /// another process got there first; then theirs is read.
    static func create(_ proposed: ContainerDescriptor, in directory: DirectoryHandle, mode: mode_t?, group: gid_t?,
                       naming: ContainerNaming) throws -> ContainerDescriptor {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(proposed)
        let temporary = ".\(fileName).\(UUID().uuidString)"
        let fd = try directory.createFile(temporary, mode: mode, group: group)
        defer { directory.remove(temporary) }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let code = errno
        close(fd)
        guard written == data.count else {
            throw StoreError(.permissionFailure, "Cannot write in \(directory.path): \(DirectoryHandle.reason(code)).")
        }
        _ = try directory.link(temporary, as: fileName)
        guard let stored = try read(in: directory, naming: naming) else {
            throw StoreError(.badContainer, "\(directory.path(of: fileName)) vanished while the container was being created.")
        }
        return stored
    }

    /// Reads the descriptor; nil when there is none. A symlink in its place is refused, not followed.
    static func read(in directory: DirectoryHandle, naming: ContainerNaming) throws -> ContainerDescriptor? {
        let path = directory.path(of: fileName)
        // One open tells "not there" from "not readable". Reading, then asking
        // whether the file exists, raced a process creating the container meanwhile.
        let fd: Int32
        do {
            fd = try directory.openRegularFile(fileName)
        } catch let error as StoreError where error.code == .serviceUnavailable {
            return nil
        } catch let error as StoreError where error.code == .invalidArguments {
            throw StoreError(.badContainer, "\(path) is not a file; it was left untouched.")
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        guard let data = try? handle.read(upToCount: maximumSize + 1) ?? Data() else {
            throw StoreError(.permissionFailure, "Cannot read \(path); check its permissions.")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard data.count <= maximumSize, let descriptor = try? decoder.decode(ContainerDescriptor.self, from: data) else {
            throw StoreError(.badContainer, "\(path) is damaged or not a \(naming.programName) container descriptor; it was left untouched.")
        }
        return descriptor
    }
}
