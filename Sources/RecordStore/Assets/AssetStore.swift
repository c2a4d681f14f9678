import Foundation

/// The `assets/` folder of a database: one file per distinct content, named by its SHA-256.
///
/// Asset names come out of a file that every member of the group can write,
/// so each is checked to be a SHA-256 before it names a file, and every file
/// is reached relative to the assets directory without following a symlink.
struct AssetStore: Sendable {
    let directory: URL
    /// Words the errors and problems for the program that opened the container.
    let naming: ContainerNaming

    /// Copies the asset's file in (unless that content is already stored) and fills in its hash and size.
    func ingest(_ asset: Asset) throws -> Asset {
        let source = try Self.openSource(asset.fileURL)
        defer { close(source) }
        var hasher = SHA256()
        var size: Int64 = 0
        try Self.readAll(source, path: asset.fileURL.path) { chunk in
            hasher.update(chunk)
            size += Int64(chunk.count)
        }
        let hash = hasher.finalize()
        let assets = try openDirectory()
        if try !holds(hash, in: assets) {
            guard lseek(source, 0, SEEK_SET) == 0 else {
                throw StoreError(.assetFileNotFound, "Cannot read \(asset.fileURL.path) again: \(DirectoryHandle.reason(errno)).")
            }
            try copy(source, from: asset.fileURL.path, as: hash, into: assets)
        }
        return Asset(fileURL: url(for: hash), contentHash: hash, size: size)
    }

    func url(for hash: String) -> URL { directory.appendingPathComponent(hash) }

    /// Puts the content in place under its hash, unless it is already there.
    ///
    /// Called again inside the write transaction, so that a concurrent
    /// collection by another process cannot leave a record without its file.
    func place(hash: String, from source: URL) throws {
        try AssetName.check(hash)
        let assets = try openDirectory()
        if try holds(hash, in: assets) { return }
        let file = try Self.openSource(source)
        defer { close(file) }
        try copy(file, from: source.path, as: hash, into: assets)
    }

    /// The stored content of `hash`, checked against it: what an engine that keeps its own copy (a server) takes.
    func contents(of hash: String) throws -> Data {
        try AssetName.check(hash)
        let fd = try openDirectory().openRegularFile(hash)
        defer { close(fd) }
        var content = Data()
        var hasher = SHA256()
        try Self.readAll(fd, path: url(for: hash).path) { chunk in
            hasher.update(chunk)
            content.append(contentsOf: chunk)
        }
        guard hasher.finalize() == hash else {
            throw StoreError(.badDatabase, "\(url(for: hash).path) does not hold the content its name promises; someone replaced it. It was not sent.")
        }
        return content
    }

    /// Puts `content`, fetched from a server, in place under `hash` unless it is there; content that is not `hash`'s is refused.
    func place(hash: String, content: Data) throws {
        try AssetName.check(hash)
        var hasher = SHA256()
        hasher.update(ArraySlice(content))
        guard hasher.finalize() == hash else {
            throw StoreError(.badDatabase, "The server's copy of the asset \(hash) does not hold the content its name promises. It was not used.")
        }
        let assets = try openDirectory()
        if try holds(hash, in: assets) { return }
        let temporary = ".incoming-\(UUID().uuidString)"
        let target = try assets.createFile(temporary, mode: (try assets.status().st_mode & 0o444) | 0o200, group: nil)
        let written = content.withUnsafeBytes { Foundation.write(target, $0.baseAddress, $0.count) }
        close(target)
        guard written == content.count else {
            assets.remove(temporary)
            throw StoreError(.serviceUnavailable, "Cannot store the asset \(hash): \(DirectoryHandle.reason(errno)).")
        }
        do {
            try assets.rename(temporary, to: hash)
        } catch {
            assets.remove(temporary)
            throw error
        }
    }

    /// Copies the stored content of `hash` to `destination`, a file that must not exist yet.
    ///
    /// The content is checked against its name on the way: a file another
    /// member swapped in is refused rather than handed on.
    func export(hash: String, to destination: URL) throws {
        try AssetName.check(hash)
        let source = try openDirectory().openRegularFile(hash)
        defer { close(source) }
        let target = open(destination.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
        guard target >= 0 else {
            let code = errno
            throw StoreError(code == EEXIST ? .invalidArguments : .permissionFailure,
                             code == EEXIST ? "\(destination.path) exists already; choose a new path, nothing was overwritten."
                                            : "Cannot create \(destination.path): \(DirectoryHandle.reason(code)).")
        }
        do {
            defer { close(target) }
            try Self.copy(source, from: url(for: hash).path, to: target, expecting: hash)
        } catch {
            unlink(destination.path)
            throw error
        }
    }

    /// Removes the files of `hashes` that no record uses any more; runs inside a write transaction.
    ///
    /// A name that is not a SHA-256 was written into the file by hand: it is
    /// never used as a path, and `problems` reports it.
    func collect(_ hashes: Set<String>, using writer: any StorageWriter) throws {
        let names = hashes.filter(AssetName.isValid)
        guard !names.isEmpty, let assets = try? DirectoryHandle(path: directory.path, naming: naming) else { return }
        for hash in names where try !writer.isAssetInUse(hash) {
            try writer.forgetAsset(hash)
            assets.remove(hash)
        }
    }

    /// What is wrong with the asset names `inUse`, for `admin check`.
    func problems(inUse names: [String]) -> [String] {
        var problems: [String] = []
        // Named as stored (cut short), so a person can find the row; whoever prints a problem makes it inert.
        let invalid = names.filter { !AssetName.isValid($0) }
        for name in invalid.prefix(20) {
            problems.append("asset name \"\(name.prefix(120))\" in use is not a SHA-256 (64 lowercase hex digits); someone wrote it into the file directly, and it is never used as a path")
        }
        if invalid.count > 20 { problems.append("and \(invalid.count - 20) more asset names in use that are not a SHA-256") }
        let assets = try? DirectoryHandle(path: directory.path, naming: naming)
        for hash in names where AssetName.isValid(hash) {
            let kind = (try? assets?.status(hash)).flatMap { $0 }.map { $0.st_mode & S_IFMT }
            if kind == nil {
                problems.append("asset \(hash) is used but its file is missing")
            } else if let kind, kind != S_IFREG {
                problems.append("asset \(hash) is \(RegularFile.describe(kind)), not a file; \(naming.programName) will not follow it")
            }
        }
        return problems
    }

    // MARK: Files

    /// Whether the content named `hash` is stored: a regular file, not something planted under its name.
    private func holds(_ hash: String, in assets: DirectoryHandle) throws -> Bool {
        guard let info = try assets.status(hash) else { return false }
        return info.st_mode & S_IFMT == S_IFREG
    }

    /// The assets directory, made with the mode of the directory it is in if it has gone.
    private func openDirectory() throws -> DirectoryHandle {
        do {
            return try DirectoryHandle(path: directory.path, naming: naming)
        } catch let error as StoreError where error.code == .serviceUnavailable {
            let parent = try DirectoryHandle(path: directory.deletingLastPathComponent().path, followingLink: true, naming: naming)
            _ = try? parent.makeDirectory(directory.lastPathComponent, mode: try parent.status().st_mode & 0o7777, group: nil)
            return try DirectoryHandle(path: directory.path, naming: naming)
        }
    }

    /// Copies `source` in under a temporary name, checks it against `hash`, then renames it into place.
    ///
    /// The file's mode follows the directory's: readable by whoever may list
    /// it (0640 in a 2770 group container, 0600 in a private one), whatever
    /// the source's mode was. Nobody needs to write stored content.
    private func copy(_ source: Int32, from path: String, as hash: String, into assets: DirectoryHandle) throws {
        let mode = (try assets.status().st_mode & 0o444) | 0o200
        let temporary = ".incoming-\(UUID().uuidString)"
        let target = try assets.createFile(temporary, mode: mode, group: nil)
        do {
            defer { close(target) }
            try Self.copy(source, from: path, to: target, expecting: hash)
            try assets.rename(temporary, to: hash)
        } catch {
            assets.remove(temporary)
            throw error
        }
    }

    /// Copies from one descriptor to another, and refuses the copy if its SHA-256 is not `hash`.
    private static func copy(_ source: Int32, from path: String, to target: Int32, expecting hash: String) throws {
        var hasher = SHA256()
        try readAll(source, path: path) { chunk in
            hasher.update(chunk)
            var offset = 0
            while offset < chunk.count {
                let written = chunk[offset...].withUnsafeBytes { write(target, $0.baseAddress, $0.count) }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else {
                    throw StoreError(.serviceUnavailable, "Cannot store the asset \(hash): \(DirectoryHandle.reason(errno)).")
                }
                offset += written
            }
        }
        guard hasher.finalize() == hash else {
            throw StoreError(.badDatabase, "\(path) does not hold the content its name \(hash) promises; it changed while being copied, or someone replaced it. Nothing was copied.")
        }
    }

    /// Reads a descriptor to its end in chunks.
    private static func readAll(_ fd: Int32, path: String, _ body: (ArraySlice<UInt8>) throws -> Void) throws {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count < 0 { throw StoreError(.assetFileNotFound, "Reading \(path) failed: \(DirectoryHandle.reason(errno)).") }
            if count == 0 { return }
            try body(chunk[0..<count])
        }
    }

    /// Opens a file to store, refusing anything but a regular file without blocking on it.
    ///
    /// The source is the user's own choice, so a symlink to a regular file is
    /// fine; a FIFO, a device (`/dev/zero`) or a directory is not.
    static func openSource(_ url: URL) throws -> Int32 {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            throw StoreError(.assetFileNotFound, "The asset file \(url.path) cannot be read: \(DirectoryHandle.reason(errno)).")
        }
        do {
            try RegularFile.check(fd, path: url.path)
        } catch {
            close(fd)
            throw error
        }
        return fd
    }
}

/// An asset's stored name: the SHA-256 of its content, exactly 64 lowercase hex digits.
enum AssetName {
    static func isValid(_ name: String) -> Bool {
        let bytes = name.utf8
        return bytes.count == 64 && bytes.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    static func check(_ name: String) throws {
        guard isValid(name) else {
            throw StoreError(.badDatabase, "An asset name in the database is not a SHA-256 (64 lowercase hex digits); someone wrote it into the file directly. It was not used.")
        }
    }
}
