import CStatfs
import Foundation

/// What kind of filesystem holds a path: the `statfs` magic, refined by the FUSE subtype from mountinfo.
public enum FilesystemKind: Sendable, Equatable {
    /// A filesystem of this machine (ext4, xfs, btrfs, tmpfs, overlay, …), by its mountinfo type.
    case local(String)
    case sshfs
    case glusterfs
    case smbnetfs
    /// bindfs re-exports a directory; two bindfs mounts of one directory keep separate caches, so it counts as shared.
    case bindfs
    /// Any other FUSE filesystem, by its subtype (`fuse` alone when it has none).
    case otherFUSE(String)
    case nfs
    case cifs
    /// 9p (v9fs): a host directory shared into a virtual machine, or a Plan 9 file server.
    case v9fs
    /// Another filesystem whose locks and caches cannot be trusted across machines (Ceph, Lustre, AFS, …).
    case otherNetwork(String)

    /// The name a person knows it by: `ext4`, `fuse.sshfs`, `nfs`.
    public var name: String {
        switch self {
        case .local(let type): type
        case .sshfs: "fuse.sshfs"
        case .glusterfs: "fuse.glusterfs"
        case .smbnetfs: "fuse.smbnetfs"
        case .bindfs: "fuse.bindfs"
        case .otherFUSE(let type): type
        case .nfs: "nfs"
        case .cifs: "cifs"
        case .v9fs: "9p"
        case .otherNetwork(let type): type
        }
    }

    /// Whether clients on other machines or other mounts may share it, so one shared SQLite file is unsafe there.
    public var isNetwork: Bool {
        if case .local = self { return false }
        return true
    }

    /// Whether the filesystem shows files' real owners and permission bits.
    ///
    /// smbnetfs shows every file as the mounting user's, every folder as 0777 and no sticky bit:
    /// the SMB server decides who may write, by its own accounts, and none of that shows here.
    public var showsOwnersAndModes: Bool { self != .smbnetfs }

    /// Classifies a filesystem from its `statfs` magic and, when known, its mountinfo type.
    public static func classify(statfsType: UInt64, mountType: String?) -> FilesystemKind {
        let type = mountType ?? ""
        if statfsType == fuseMagic || type == "fuse" || type.hasPrefix("fuse.") || type == "fuseblk" {
            switch type {
            case "fuse.sshfs": return .sshfs
            case "fuse.glusterfs": return .glusterfs
            case "fuse.smbnetfs": return .smbnetfs
            case "fuse.bindfs": return .bindfs
            case "": return .otherFUSE("fuse")
            default: return .otherFUSE(type)
            }
        }
        if statfsType == 0x6969 || type == "nfs" || type == "nfs4" { return .nfs }
        if [0xFF53_4D42, 0xFE53_4D42, 0x517B].contains(statfsType) || type == "cifs" || type == "smb3" || type == "smbfs" { return .cifs }
        if statfsType == 0x0102_1997 || type == "9p" { return .v9fs }
        if JournalMode.networkFilesystemMagics.contains(statfsType) || ["ceph", "lustre", "afs", "gpfs", "ocfs2", "gfs2"].contains(type) {
            return .otherNetwork(type.isEmpty ? "0x" + String(statfsType, radix: 16) : type)
        }
        return .local(type.isEmpty ? "unknown" : type)
    }

    static let fuseMagic: UInt64 = 0x6573_5546
}

/// The filesystem a container lives on, as detection sees it: its kind, and the mount that holds it.
public struct Filesystem: Sendable, Equatable {
    public var kind: FilesystemKind
    /// The mountinfo line of the mount holding the path; nil when `/proc/self/mountinfo` could not be read.
    public var mount: MountTable.Mount?

    public var isNetwork: Bool { kind.isNetwork }

    public init(kind: FilesystemKind, mount: MountTable.Mount?) {
        self.kind = kind
        self.mount = mount
    }

    /// Detects the filesystem of `url`, or of its nearest existing parent when it is not made yet.
    public static func detect(for url: URL, table: MountTable = .current()) -> Filesystem {
        let (existing, path) = resolve(url.path)
        var mount = table.mount(holding: path)
        if let plain = mount, plain.type == "fuse",
           let program = FuseDaemon.program(serving: plain.mountPoint, among: ["bindfs", "sshfs", "glusterfs", "smbnetfs"]) {
            // A FUSE mount with no subtype (bindfs's): named after the daemon serving it, when it can be seen.
            mount?.type = "fuse." + program
        }
        return Filesystem(kind: .classify(statfsType: UInt64(fatchat_filesystem_type(existing)), mountType: mount?.type), mount: mount)
    }

    /// The value of mount option `name` (`""` for a flag); nil when the mount does not show it.
    public func option(_ name: String) -> String? {
        for option in mount?.options ?? [] {
            if option == name { return "" }
            if option.hasPrefix(name + "=") { return String(option.dropFirst(name.count + 1)) }
        }
        return nil
    }

    /// The nearest part of `path` that exists, and the whole path, with symlinks resolved in that part.
    private static func resolve(_ path: String) -> (existing: String, full: String) {
        var current = path.isEmpty ? "." : path
        for _ in 0..<64 {
            if let resolved = realpath(current, nil) {
                defer { free(resolved) }
                let real = String(cString: resolved)
                let rest = path.hasPrefix(current) ? String(path.dropFirst(current.count)) : ""
                return (real, real == "/" ? (rest.isEmpty ? "/" : rest) : real + rest)
            }
            let parent = (current as NSString).deletingLastPathComponent
            if parent == current || parent.isEmpty { break }
            current = parent
        }
        return ("/", path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path)
    }
}
