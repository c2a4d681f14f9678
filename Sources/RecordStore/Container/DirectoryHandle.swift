import CStatfs
import Foundation

/// An open directory whose entries are reached by name relative to it, never through a symlink.
///
/// Another member of the group can replace any entry of a shared container
/// at any moment (`rm`, `ln -s`). Going through one directory descriptor
/// with `O_NOFOLLOW` means a name always resolves inside this directory, and
/// a symlink planted under that name is refused instead of followed.
final class DirectoryHandle {
    /// The path it was opened by, for messages and for SQLite, which takes paths.
    let path: String
    let fd: Int32
    /// Words the errors of this directory and of those opened through it.
    let naming: ContainerNaming

    /// Opens `path`; with `followingLink: false` a symlink at the last component is refused.
    init(path: String, followingLink: Bool = false, naming: ContainerNaming) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (followingLink ? 0 : O_NOFOLLOW))
        guard fd >= 0 else { throw Self.openError(path, errno, naming) }
        self.path = path
        self.fd = fd
        self.naming = naming
    }

    private init(path: String, fd: Int32, naming: ContainerNaming) {
        self.path = path
        self.fd = fd
        self.naming = naming
    }

    deinit { close(fd) }

    func path(of name: String) -> String { path + "/" + name }

    /// What `name` is, without following it; nil when there is nothing by that name.
    func status(_ name: String) throws -> stat? {
        var info = stat()
        if fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 { return info }
        if errno == ENOENT { return nil }
        throw StoreError(.permissionFailure, "Cannot look at \(path(of: name)): \(Self.reason(errno)).")
    }

    /// Like `status(_:)`, but asks a network filesystem's server rather than the attributes its client cached
    /// (GlusterFS's FUSE client keeps them 1 s); on a local disk it is the same.
    func freshStatus(_ name: String) throws -> stat? {
        var info = stat()
        if fatchat_fresh_status(fd, name, &info) == 0 { return info }
        if errno == ENOENT { return nil }
        throw StoreError(.permissionFailure, "Cannot look at \(path(of: name)): \(Self.reason(errno)).")
    }

    /// This directory's own mode, owner and group.
    func status() throws -> stat {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw StoreError(.permissionFailure, "Cannot look at \(path): \(Self.reason(errno)).")
        }
        return info
    }

    /// Opens the subdirectory `name`, refusing a symlink.
    func directory(_ name: String) throws -> DirectoryHandle {
        let child = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        guard child >= 0 else { throw Self.openError(path(of: name), errno, naming) }
        return DirectoryHandle(path: path(of: name), fd: child, naming: naming)
    }

    /// Makes the subdirectory `name` and gives it `mode` and `group`; it must not exist yet.
    ///
    /// `mode` nil leaves the umask's choice. Only what this call made is ever chmod-ed.
    func makeDirectory(_ name: String, mode: mode_t?, group: gid_t?) throws -> DirectoryHandle {
        guard mkdirat(fd, name, mode ?? 0o777) == 0 else {
            throw StoreError(errno == EEXIST ? .badContainer : .permissionFailure, "Cannot create \(path(of: name)): \(Self.reason(errno)).")
        }
        let made = try directory(name)
        // Someone who can write here could have swapped in a directory of theirs meanwhile.
        guard try made.status().st_uid == geteuid() else {
            throw StoreError(.badContainer, "\(made.path) was replaced by someone else while it was being made; nothing was changed in it.")
        }
        try Self.give(made.fd, made.path, mode: mode, group: group)
        return made
    }

    /// Opens the sticky, setgid subdirectory `name` in which each member keeps what only they may change,
    /// making it (with this directory's permissions) if it is not there.
    ///
    /// One that is not sticky is refused: in it, any member could `harm` (say, "remove another's logs").
    /// Where the filesystem shows no real modes (`modesAreMeaningful` false: smbnetfs shows every
    /// folder as 0777), a missing sticky bit says nothing and is not held against the folder.
    func stickyDirectory(_ name: String, harm: String, modesAreMeaningful: Bool = true) throws -> DirectoryHandle {
        func checked(_ folder: DirectoryHandle) throws -> DirectoryHandle {
            let sticky = try folder.status().st_mode & S_ISVTX != 0
            guard sticky || !modesAreMeaningful else {
                throw StoreError(.badContainer, "\(folder.path) is not sticky, so any member could \(harm). Its owner can fix it with `chmod +t \(folder.path)`.")
            }
            return folder
        }
        if try status(name) == nil {
            let mode = (try status().st_mode & 0o777) | S_ISVTX | S_ISGID
            do {
                return try checked(makeDirectory(name, mode: mode, group: nil))
            } catch let error as StoreError where error.code == .badContainer && (try? status(name)) != nil {
                // Another client made it first; use theirs, after the same check.
            }
        }
        return try checked(directory(name))
    }

    /// Opens the regular file `name` for reading, refusing a symlink, a FIFO or a device.
    /// With `direct`, reads bypass the page cache (O_DIRECT): on a FUSE mount each goes to the daemon,
    /// whatever size the kernel has cached; they must then be aligned (`LogFileReader.read`).
    func openRegularFile(_ name: String, direct: Bool = false) throws -> Int32 {
        let file = openat(fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (direct ? fatchat_direct_io_flag() : 0))
        guard file >= 0 else { throw Self.openError(path(of: name), errno, naming) }
        do {
            try RegularFile.check(file, path: path(of: name))
        } catch {
            close(file)
            throw error
        }
        return file
    }

    /// Creates the file `name`, which must not exist, and gives it `mode` and `group`.
    func createFile(_ name: String, mode: mode_t?, group: gid_t?) throws -> Int32 {
        let file = openat(fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode ?? 0o666)
        guard file >= 0 else {
            throw StoreError(.permissionFailure, "Cannot create \(path(of: name)): \(Self.reason(errno)).")
        }
        do {
            try Self.give(file, path(of: name), mode: mode, group: group)
        } catch {
            close(file)
            unlinkat(fd, name, 0)
            throw error
        }
        return file
    }

    /// Puts the finished file `name` in place as `target`; false when `target` exists already, which is left as it is.
    ///
    /// `link(2)` is the first choice: it never replaces anything. Some network
    /// filesystems have no hard links (smbnetfs gives EPERM); there the file is
    /// renamed with `RENAME_NOREPLACE` or, where that flag is unknown too, renamed
    /// onto a name just checked to be free, under the directory lock callers hold.
    /// Either way `name` may be gone afterwards; callers remove it regardless.
    func link(_ name: String, as target: String) throws -> Bool {
        if linkat(fd, name, fd, target, 0) == 0 { return true }
        let code = errno
        if code == EEXIST { return false }
        guard [EPERM, EOPNOTSUPP, ENOSYS, EMLINK].contains(code) else {
            throw StoreError(.permissionFailure, "Cannot create \(path(of: target)): \(Self.reason(code)).")
        }
        if fatchat_rename_noreplace(fd, name, fd, target) == 0 { return true }
        let renameCode = errno
        if renameCode == EEXIST { return false }
        guard [EINVAL, ENOSYS, EOPNOTSUPP, EPERM].contains(renameCode) else {
            throw StoreError(.permissionFailure, "Cannot create \(path(of: target)): \(Self.reason(renameCode)).")
        }
        if try status(target) != nil { return false }
        try rename(name, to: target)
        return true
    }

    /// Renames `name` to `target`, replacing whatever entry `target` was (a symlink is replaced, not followed).
    func rename(_ name: String, to target: String) throws {
        guard renameat(fd, name, fd, target) == 0 else {
            throw StoreError(.serviceUnavailable, "Cannot create \(path(of: target)): \(Self.reason(errno)).")
        }
    }

    /// Removes the entry `name` (a symlink itself, never its target); nothing happens if it is gone.
    func remove(_ name: String) {
        unlinkat(fd, name, 0)
    }

    /// Waits for the exclusive lock on this directory, so that two processes do not make one container at once.
    ///
    /// Some network filesystems have no `flock`; there the link(2) of each
    /// file still keeps the first one made.
    func lock() {
        while flock(fd, LOCK_EX) != 0, errno == EINTR {}
    }

    /// Gives this directory, which this process just made, its mode and group.
    func give(mode: mode_t?, group: gid_t?) throws {
        try Self.give(fd, path, mode: mode, group: group)
    }

    /// Gives a file this process just made its mode and group, through its descriptor.
    private static func give(_ fd: Int32, _ path: String, mode: mode_t?, group: gid_t?) throws {
        if let group, fchown(fd, uid_t.max, group) != 0 {
            throw StoreError(.permissionFailure, "Cannot give \(path) to group \(group): \(reason(errno)).")
        }
        if let mode, fchmod(fd, mode) != 0 {
            throw StoreError(.permissionFailure, "Cannot set the mode of \(path): \(reason(errno)).")
        }
    }

    private static func openError(_ path: String, _ code: Int32, _ naming: ContainerNaming) -> StoreError {
        switch code {
        case ELOOP:
            return StoreError(.badContainer, "\(path) is a symbolic link. \(naming.programName) follows no symlink inside a container, since any member could plant one; put the real directory or file there.")
        case ENOTDIR:
            return StoreError(.badContainer, "\(path) is not a directory; a container's entries must be what \(naming.programName) made.")
        case ENOENT:
            return StoreError(.serviceUnavailable, "\(path) is not there.")
        default:
            return StoreError(.permissionFailure, "Cannot open \(path): \(reason(code)).")
        }
    }

    static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
