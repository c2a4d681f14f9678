import Foundation

/// The mounts of this process, read from `/proc/self/mountinfo`, and the one that holds a path.
///
/// `statfs` says only "FUSE" for sshfs, GlusterFS, smbnetfs and bindfs alike;
/// the FUSE subtype and the mount options are in mountinfo. Its lines are the
/// kernel's, but a mount point can be any path, so every line is parsed
/// defensively: a line that does not have the expected shape is skipped.
public struct MountTable: Sendable, Equatable {
    /// One line of mountinfo: where a filesystem is mounted, its type, source and options.
    public struct Mount: Sendable, Equatable {
        /// The mount point, with the kernel's octal escapes (`\040` for a space) undone.
        public var mountPoint: String
        /// The filesystem type with its FUSE subtype, such as `ext4` or `fuse.sshfs`.
        public var type: String
        /// What is mounted: a device, `host:/path`, or a FUSE daemon's name.
        public var source: String
        /// The per-mount options (`rw,nosuid,relatime`) followed by the superblock's (`user_id=0,…`).
        public var options: [String]
    }

    public var mounts: [Mount]

    /// The table this process sees; empty when `/proc` is not there or cannot be read.
    public static func current() -> MountTable {
        // mountinfo of a process in a container with many mounts is some hundreds of KB at most.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/mountinfo"),
              let data = try? handle.read(upToCount: 4 << 20) else { return MountTable(mounts: []) }
        try? handle.close()
        return parse(String(decoding: data, as: UTF8.self))
    }

    /// Parses mountinfo text, skipping lines it does not understand.
    ///
    /// A line reads `id parent major:minor root mountpoint options [optional…] - type source superoptions`.
    public static func parse(_ text: String) -> MountTable {
        var mounts: [Mount] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            // The separator comes after the six fixed fields and any optional ones.
            guard fields.count >= 10, let dash = fields[6...].firstIndex(of: "-"), fields.count >= dash + 3 else { continue }
            let mountPoint = unescape(fields[4])
            guard mountPoint.hasPrefix("/") else { continue }
            let options = fields[5].split(separator: ",").map(String.init)
                + fields[dash + 3 ..< fields.count].joined(separator: " ").split(separator: ",").map(String.init)
            mounts.append(Mount(mountPoint: mountPoint, type: unescape(fields[dash + 1]), source: unescape(fields[dash + 2]),
                                options: options))
        }
        return MountTable(mounts: mounts)
    }

    /// The mount that holds `path` (absolute, symlinks resolved): the longest mount point that is a prefix
    /// of it on a component boundary; the last such line wins, as a later mount hides an earlier one.
    public func mount(holding path: String) -> Mount? {
        var best: Mount?
        for mount in mounts where Self.contains(mount.mountPoint, path) {
            if let current = best, current.mountPoint.utf8.count > mount.mountPoint.utf8.count { continue }
            best = mount
        }
        return best
    }

    private static func contains(_ mountPoint: String, _ path: String) -> Bool {
        if mountPoint == "/" || mountPoint == path { return true }
        return path.hasPrefix(mountPoint + "/")
    }

    /// Undoes mountinfo's escapes: a backslash and three octal digits stand for one byte (space, tab, newline, backslash).
    static func unescape(_ field: String) -> String {
        let bytes = Array(field.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\\"), let value = octal(bytes[(index + 1) ..< min(index + 4, bytes.count)]) {
                out.append(value)
                index += 4
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Three octal digits as one byte; nil for anything else.
    private static func octal(_ digits: ArraySlice<UInt8>) -> UInt8? {
        guard digits.count == 3 else { return nil }
        var value = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(digit) else { return nil }
            value = value * 8 + Int(digit - UInt8(ascii: "0"))
        }
        return value <= 255 ? UInt8(value) : nil
    }
}
