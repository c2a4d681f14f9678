import Foundation

/// `logs/` in a container: one directory per OS account, each holding that account's clients' logs.
///
/// `logs/` is sticky and setgid, so a member can make their own directory in
/// it but cannot remove or rename anyone else's. Names read from a listing
/// are someone else's input: only names of the expected shape are used, and
/// only ever relative to the directory they were listed in.
enum LogDirectory {
    static let name = "logs"
    static let suffix = ".log"

    static func fileName(for client: UUID) -> String { client.uuidString + suffix }

    /// The client ID a log's file name stands for; nil for any other name.
    static func client(inFileName name: String) -> UUID? {
        guard name.hasSuffix(suffix), name.utf8.count == 36 + suffix.utf8.count else { return nil }
        let stem = String(name.dropLast(suffix.count))
        guard let uuid = UUID(uuidString: stem), uuid.uuidString == stem else { return nil }
        return uuid
    }

    /// The uid an account directory's name claims (`_<uid>_<user name>`); nil for any other name.
    static func uid(inAccount name: String) -> uid_t? {
        guard name.utf8.count <= 128, name.hasPrefix("_") else { return nil }
        let parts = name.dropFirst().split(separator: "_", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[1].isEmpty, parts[0].utf8.count <= 10, parts[0].allSatisfy(\.isASCII),
              let uid = UInt32(parts[0]), String(uid) == parts[0] else { return nil }
        let allowed = parts[1].unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-$".unicodeScalars.contains($0)) }
        return allowed ? uid : nil
    }

    /// The names in a directory, without `.` and `..`.
    static func names(in directory: DirectoryHandle) throws -> [String] {
        // A fresh open each time: sshfs lists a long-held, rewound directory handle as empty once its cache expires.
        let copy = openat(directory.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            throw StoreError(.serviceUnavailable, "Cannot list \(directory.path): \(DirectoryHandle.reason(errno)).")
        }
        defer { closedir(stream) }
        // The copy shares its position with the original: start from the top every time.
        rewinddir(stream)
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Opens `logs/` in the container, making it (sticky, setgid, with the container directory's permissions) if it is not there.
    ///
    /// `filesystem` is where the container lives: on one that shows no real modes (smbnetfs shows
    /// every folder as 0777), a missing sticky bit says nothing, and is not held against the folder.
    static func open(in container: DirectoryHandle, filesystem: FilesystemKind) throws -> DirectoryHandle {
        try container.stickyDirectory(name, harm: "remove another's logs", modesAreMeaningful: filesystem.showsOwnersAndModes)
    }

    /// Opens this account's own directory in `logs/`, making it if it is not there; only its owner may write in it.
    /// Also tells whether this call made it.
    static func ownDirectory(in logs: DirectoryHandle, account: String) throws -> (DirectoryHandle, made: Bool) {
        if try logs.status(account) == nil {
            // Readable where the container is; writable by its owner alone.
            let mode = S_ISGID | 0o700 | (try logs.status().st_mode & 0o055)
            do {
                return (try logs.makeDirectory(account, mode: mode, group: nil), true)
            } catch let error as StoreError where error.code == .badContainer && (try? logs.status(account)) != nil {
                // Made by another client of this account meanwhile.
            }
        }
        return (try logs.directory(account), false)
    }
}
