import Foundation

/// `container.json`: the container's identity and the journal mode every client must use.
struct ContainerDescriptor: Codable, Equatable {
    static let fileName = "container.json"

    var identifier: String
    var mode: JournalMode
    var created: Date

    /// Reads the descriptor, or writes `proposed` if there is none yet.
    ///
    /// `beforeCreating` runs first, so that whoever sees the descriptor also
    /// sees what it promises (the database file).
    /// Creation is race-free: the file is written aside, then `link(2)`ed into
    /// place, which fails if another process got there first; then theirs is read.
    static func readOrCreate(in directory: URL, proposed: ContainerDescriptor?, beforeCreating: () throws -> Void) throws -> ContainerDescriptor {
        let url = directory.appendingPathComponent(fileName)
        if let existing = try read(url) { return existing }
        guard let proposed else {
            throw StoreError(.badContainer, "\(directory.path) is not a Fatchat container (it has no \(fileName)). Create one with `fatchat init`.")
        }
        try beforeCreating()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let temporary = directory.appendingPathComponent(".\(fileName).\(UUID().uuidString)")
        do {
            try encoder.encode(proposed).write(to: temporary)
        } catch {
            throw StoreError(.permissionFailure, "Cannot write in \(directory.path): \(error.localizedDescription)")
        }
        defer { unlink(temporary.path) }
        if link(temporary.path, url.path) != 0 && errno != EEXIST {
            throw StoreError(.permissionFailure, "Cannot create \(url.path): \(String(cString: strerror(errno))).")
        }
        guard let stored = try read(url) else {
            throw StoreError(.badContainer, "\(url.path) vanished while the container was being created.")
        }
        return stored
    }

    private static func read(_ url: URL) throws -> ContainerDescriptor? {
        // One open(2) tells "not there yet" from "not readable". Reading, then asking
        // whether the file exists, raced a process creating the container meanwhile.
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw StoreError(.permissionFailure, "Cannot read \(url.path) (\(String(cString: strerror(errno)))); check its permissions.")
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        guard let data = try? handle.readToEnd() ?? Data() else {
            throw StoreError(.permissionFailure, "Cannot read \(url.path); check its permissions.")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let descriptor = try? decoder.decode(ContainerDescriptor.self, from: data) else {
            throw StoreError(.badContainer, "\(url.path) is damaged or not a Fatchat container descriptor; it was left untouched.")
        }
        return descriptor
    }
}
