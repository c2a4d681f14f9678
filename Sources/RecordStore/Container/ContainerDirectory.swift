import Foundation

/// The entries of a container directory, checked before anything opens them, and made only on request.
///
/// A container holds `container.json`, `public.sqlite` (with SQLite's -wal,
/// -shm or -journal beside it) and `assets/`. Any member of the group can
/// remove or replace each of them, so none is followed if it is a symlink,
/// and a container whose descriptor has gone is an error rather than a new
/// container: a new identity would orphan every member's queued messages.
enum ContainerDirectory {
    static let databaseName = "public.sqlite"
    static let assetsName = "assets"

    /// Opens the container in `url` and returns its descriptor.
    ///
    /// With `access`, a directory that holds no container yet gets one, made
    /// with those modes; with `exclusive` as well (a program's `init`), a directory
    /// that holds any container entry is refused. `propose` gives the new
    /// descriptor once the directory exists; `naming` words the errors.
    static func open(_ url: URL, creating access: ContainerAccess?, exclusive: Bool = false, naming: ContainerNaming,
                     propose: () -> ContainerDescriptor) throws -> ContainerDescriptor {
        let madeDirectory = try makeDirectoryIfMissing(url, access: access, naming: naming)
        let directory = try DirectoryHandle(path: url.path, followingLink: true, naming: naming)
        if !exclusive, let descriptor = try existing(in: directory, naming: naming, creatorMayBeAtWork: true) { return descriptor }
        guard let access else {
            throw StoreError(.badContainer, "\(url.path) is not a \(naming.programName) container (it has no \(ContainerDescriptor.fileName)). Make one with \(naming.creating(url.path)).")
        }
        // Two processes that both found no container make one, not two.
        directory.lock()
        if !exclusive, let descriptor = try existing(in: directory, naming: naming) { return descriptor }
        if exclusive {
            try refuseEntries(in: directory, naming: naming)
            if !madeDirectory { try checkExisting(directory, against: access, naming: naming) }
        }
        if try directory.status(assetsName) == nil {
            _ = try directory.makeDirectory(assetsName, mode: access.directoryMode, group: access.group)
        }
        let proposed = propose()
        // A log container never opens the shared file, and making it would take SQLite locks on a filesystem that may not keep them;
        // a postgresql container keeps its public database on the server.
        if (proposed.engine ?? .sqlite) == .sqlite {
            try DatabaseFile.create(databaseName, in: directory, mode: access.databaseMode, group: access.group)
        }
        let descriptor = try ContainerDescriptor.create(proposed, in: directory, mode: access.descriptorMode, group: access.group, naming: naming)
        // Members may write the directory only once everything in it is made.
        if madeDirectory { try directory.give(mode: access.directoryMode, group: access.group) }
        return descriptor
    }

    /// Makes the container directory if it is not there and `access` allows; returns whether it did.
    ///
    /// It starts out as the creator's alone when modes are given, and is given
    /// its group and mode last.
    private static func makeDirectoryIfMissing(_ url: URL, access: ContainerAccess?, naming: ContainerNaming) throws -> Bool {
        var info = stat()
        if stat(url.path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw StoreError(.badContainer, "\(url.path) is a file; a container is a directory.")
            }
            return false
        }
        guard errno == ENOENT, let access else {
            throw StoreError(.serviceUnavailable, "The container \(url.path) is not there. If it lives on a network filesystem, check that it is mounted; to make a new container, run \(naming.creating(url.path)).")
        }
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw StoreError(.permissionFailure, "Cannot create the container \(url.path): \(error.localizedDescription)")
        }
        if mkdir(url.path, access.directoryMode == nil ? 0o777 : 0o700) == 0 { return true }
        if errno == EEXIST { return false }
        throw StoreError(.permissionFailure, "Cannot create the container \(url.path): \(DirectoryHandle.reason(errno)).")
    }

    /// The descriptor of the container in `directory`, after checking its entries; nil when it holds none.
    ///
    /// A database without a descriptor may be a container that another process is making right
    /// now, under the directory's lock (it makes the database first): with `creatorMayBeAtWork`,
    /// that lock is waited for and the directory read again before the descriptor is called gone.
    private static func existing(in directory: DirectoryHandle, naming: ContainerNaming,
                                 creatorMayBeAtWork: Bool = false) throws -> ContainerDescriptor? {
        guard let descriptor = try ContainerDescriptor.read(in: directory, naming: naming) else {
            if try directory.status(databaseName) != nil {
                if creatorMayBeAtWork {
                    directory.lock()
                    return try existing(in: directory, naming: naming)
                }
                throw StoreError(.badContainer, "\(directory.path) holds a public database, but its \(ContainerDescriptor.fileName) has gone: someone deleted or moved it, or a \(naming.creating()) was cut short. Nothing was changed, and no new identity was made, since that would orphan every member's queued messages. Put \(ContainerDescriptor.fileName) back from a backup; if the directory holds nothing you need, move it aside and run \(naming.creating()) again.")
            }
            return nil
        }
        guard let assets = try directory.status(assetsName) else {
            // Gone with every stored file; made again like the directory around it, so new ones can be stored.
            _ = try? directory.makeDirectory(assetsName, mode: try directory.status().st_mode & 0o7777, group: nil)
            return descriptor
        }
        if assets.st_mode & S_IFMT != S_IFDIR {
            throw StoreError(.badContainer, "\(directory.path(of: assetsName)) is \(RegularFile.describe(assets.st_mode & S_IFMT)), not the assets directory. \(naming.programName) follows no symlink inside a container, since any member could plant one; put the real directory back.")
        }
        return descriptor
    }

    /// Refuses, for a program's `init`, a directory that holds any entry of a container.
    private static func refuseEntries(in directory: DirectoryHandle, naming: ContainerNaming) throws {
        let names = [ContainerDescriptor.fileName, databaseName, assetsName] + ["-wal", "-shm", "-journal"].map { databaseName + $0 }
        for name in names where try directory.status(name) != nil {
            let what = name == ContainerDescriptor.fileName ? "is a container already" : "already holds \(name)"
            throw StoreError(.badContainer, "\(directory.path) \(what); \(naming.creating()) makes a container only where there is none, and changed nothing. Choose another directory, or move that away.")
        }
    }

    /// Refuses a directory that was there before unless it already has the group and mode asked for: init changes nothing it did not make.
    private static func checkExisting(_ directory: DirectoryHandle, against access: ContainerAccess, naming: ContainerNaming) throws {
        let info = try directory.status()
        var steps: [String] = []
        if let group = access.group, info.st_gid != group {
            steps.append("chgrp \(getgrgid(group).map { String(cString: $0.pointee.gr_name) } ?? String(group)) \(directory.path)")
        }
        if let mode = access.directoryMode, info.st_mode & 0o7777 != mode {
            steps.append("chmod \(String(mode, radix: 8)) \(directory.path)")
        }
        guard !steps.isEmpty else { return }
        throw StoreError(.badContainer, "\(directory.path) exists already, and \(naming.creating()) changes nothing it did not make. Run `\(steps.joined(separator: " && "))` first, or name a directory that does not exist yet.")
    }
}
