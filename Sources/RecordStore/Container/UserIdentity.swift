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
        guard let entry = getpwuid(uid) else {
            return UserIdentity(uid: uid, userName: "uid\(uid)", homeDirectory: ProcessInfo.processInfo.environment["HOME"] ?? "/")
        }
        return UserIdentity(uid: uid, userName: String(cString: entry.pointee.pw_name), homeDirectory: String(cString: entry.pointee.pw_dir))
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
