import Foundation

/// Real OS users for tests that are about permissions. Tests run as root, so `useradd` works.
public enum OSUsers {
    /// Whether this process can make users (it runs as root, and useradd exists).
    public static var available: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/useradd")
    }

    /// Makes the group and the users (with home directories) if they are not there yet.
    public static func ensure(users: [String], group: String? = nil) throws {
        // Suites run in parallel; one useradd at a time, or /etc/passwd's lock refuses the second.
        let lock = open("/tmp/fatchat-test-users.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        defer { if lock >= 0 { close(lock) } }
        if lock >= 0 { flock(lock, LOCK_EX) }
        if let group, groupID(of: group) == nil {
            try run("/usr/sbin/groupadd", [group], allowing: [9])
        }
        for user in users where ids(of: user) == nil {
            try run("/usr/sbin/useradd", ["--create-home", "--shell", "/bin/sh", user], allowing: [9])
        }
        if let group {
            for user in users { try run("/usr/sbin/usermod", ["--append", "--groups", group, user]) }
        }
    }

    /// A user's uid and primary gid, or nil when there is no such user.
    ///
    /// With `getpwnam_r`, into a buffer of the caller's: suites run in parallel, and `getpwnam`
    /// returns one static entry that another thread's lookup overwrites while it is read.
    public static func ids(of user: String) -> (uid: uid_t, gid: gid_t)? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwnam_r(user, &entry, &buffer, buffer.count, &found) == 0, found != nil else { return nil }
        return (entry.pw_uid, entry.pw_gid)
    }

    /// The name and home directory of the account `uid`; `getpwuid_r`, for the same reason as `ids(of:)`.
    public static func account(_ uid: uid_t) -> (name: String, home: String)? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &found) == 0, found != nil else { return nil }
        return (String(cString: entry.pw_name), String(cString: entry.pw_dir))
    }

    /// A group's gid, or nil when there is no such group; `getgrnam_r`, for the same reason as `ids(of:)`.
    public static func groupID(of group: String) -> gid_t? {
        var entry = Glibc.group()
        var found: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrnam_r(group, &entry, &buffer, buffer.count, &found) == 0, found != nil else { return nil }
        return entry.gr_gid
    }

    /// The launcher that runs a command as `user`, with that user's own data directory.
    ///
    /// `setpriv` execs in place, so the command stays in the terminal's foreground
    /// process group and gets SIGWINCH (runuser forks and would not pass it on).
    public static func launcher(for user: String) -> [String] {
        ["/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--init-groups", "--",
         "/usr/bin/env", "-u", "XDG_DATA_HOME", "HOME=/home/\(user)"]
    }

    private static func run(_ tool: String, _ arguments: [String], allowing okCodes: Set<Int32> = []) throws {
        let process = try SpawnedProcess([tool] + arguments)
        process.waitUntilExit()
        guard process.terminationStatus == 0 || okCodes.contains(process.terminationStatus) else {
            throw WorkerProcess.Failure(description: "\(tool) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
    }
}
