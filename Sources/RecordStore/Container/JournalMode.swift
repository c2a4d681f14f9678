import CStatfs
import Foundation

/// How a database file is shared between processes, chosen by the filesystem it lives on.
public enum JournalMode: String, Sendable, Codable, CaseIterable {
    /// WAL with a busy timeout and `BEGIN IMMEDIATE` writes: one machine, a local filesystem.
    case local
    /// Rollback journal, `unix-dotfile` locking and a fresh open per transaction: NFS, SMB, sshfs and the like.
    case network

    /// The mode a directory's filesystem calls for, from `statfs`.
    public static func detect(for directory: URL) -> JournalMode {
        let type = UInt64(fatchat_filesystem_type(directory.path))
        return networkFilesystemMagics.contains(type) ? .network : .local
    }

    /// `f_type` values of filesystems whose locks or caches cannot be trusted across machines or mounts.
    static let networkFilesystemMagics: Set<UInt64> = [
        0x6969,      // NFS
        0x517B,      // SMB
        0xFF53_4D42, // CIFS
        0xFE53_4D42, // SMB2
        0x6573_5546, // FUSE (sshfs, bindfs, ...)
        0x0102_1997, // 9p / v9fs
        0x5346_414F, // AFS
        0x00C3_6400, // Ceph
        0x0BD0_0BD0, // Lustre
        0x4750_4653, // GPFS
        0x7461_636F, // OCFS2
        0x0116_1970, // GFS2
    ]
}
