import Foundation

/// Who is using the store: the OS account, never a handle someone typed.
public struct UserIdentity: Hashable, Sendable {
    public var uid: UInt32
    public var userName: String
    /// The user's home directory, from the password database.
    public var homeDirectory: String

    /// The account this process runs as.
    public static var current: UserIdentity {
        let uid = getuid()
        guard let (name, home) = passwordEntry(uid) else {
            return UserIdentity(uid: uid, userName: "uid\(uid)", homeDirectory: ProcessInfo.processInfo.environment["HOME"] ?? "/")
        }
        return UserIdentity(uid: uid, userName: name, homeDirectory: home)
    }

    /// The name and home directory the password database gives `uid`, read with `getpwuid_r`: containers
    /// open on several threads at once, and `getpwuid` hands every thread one shared entry.
    private static func passwordEntry(_ uid: uid_t) -> (name: String, home: String)? {
        var size = max(Int(sysconf(Int32(_SC_GETPW_R_SIZE_MAX))), 1024)
        while size <= 1 << 20 {
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>?
            let status = getpwuid_r(uid, &entry, buffer, size, &found)
            if status == ERANGE { size *= 4; continue }
            // The entry's strings point into `buffer`.
            guard status == 0, found != nil, let name = entry.pw_name, let home = entry.pw_dir else { return nil }
            return (String(cString: name), String(cString: home))
        }
        return nil
    }

    /// The user's record ID, the same from run to run: `_<uid>_<name>`.
    public var recordID: RecordID { RecordID(recordName: "_\(uid)_\(userName)") }

    /// `$XDG_DATA_HOME`, else `~/.local/share`, where per-user data lives.
    public var dataHome: URL {
        if let xdg = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true)
        }
        return URL(fileURLWithPath: homeDirectory, isDirectory: true).appendingPathComponent(".local/share", isDirectory: true)
    }
}
