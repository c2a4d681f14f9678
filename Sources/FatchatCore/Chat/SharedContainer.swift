import Foundation
import RecordStore

/// `fatchat init`: a container directory that the members of a group can share.
public enum SharedContainer {
    /// Makes the container. With `group`, the directory is setgid to it and group-writable,
    /// and the umask lets the files SQLite creates later stay group-writable too.
    public static func make(at url: URL, group: String?, mode: JournalMode?) throws -> Container {
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("container.json").path) {
            throw CommandError("\(url.path) is a container already; nothing was changed.")
        }
        var gid: gid_t?
        if let group {
            guard let entry = getgrnam(group) else { throw CommandError("There is no group '\(group)'; create it with groupadd first.") }
            gid = entry.pointee.gr_gid
        }
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw CommandError("Cannot create \(url.path): \(error.localizedDescription)")
        }
        if let gid {
            try share(url.path, gid: gid, mode: 0o2775)
        }
        let previous = umask(gid == nil ? 0o022 : 0o002)
        defer { umask(previous) }
        let container = try Container(url: url, options: Container.Options(mode: mode))
        if let gid {
            try share(url.appendingPathComponent("assets").path, gid: gid, mode: 0o2775)
            for file in ["public.sqlite", "container.json"] {
                try share(url.appendingPathComponent(file).path, gid: gid, mode: 0o664)
            }
        }
        return container
    }

    private static func share(_ path: String, gid: gid_t, mode: mode_t) throws {
        guard chown(path, uid_t.max, gid) == 0, chmod(path, mode) == 0 else {
            throw CommandError("Cannot give \(path) to the group: \(String(cString: strerror(errno))).")
        }
    }
}
