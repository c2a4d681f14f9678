import Foundation

/// Real OS users for tests that are about permissions. Tests run as root, so `useradd` works.
public enum OSUsers {
    /// Whether this process can make users (it runs as root, and useradd exists).
    public static var available: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/useradd")
    }

    /// Makes the group and the users (with home directories) if they are not there yet.
    public static func ensure(users: [String], group: String? = nil) throws {
        if let group, getgrnam(group) == nil {
            try run("/usr/sbin/groupadd", [group], allowing: [9])
        }
        for user in users where getpwnam(user) == nil {
            try run("/usr/sbin/useradd", ["--create-home", "--shell", "/bin/sh", user], allowing: [9])
        }
        if let group {
            for user in users { try run("/usr/sbin/usermod", ["--append", "--groups", group, user]) }
        }
    }

    /// The launcher that runs a command as `user`, with that user's own data directory.
    public static func launcher(for user: String) -> [String] {
        ["/usr/sbin/runuser", "-u", user, "--", "/usr/bin/env", "-u", "XDG_DATA_HOME", "HOME=/home/\(user)"]
    }

    private static func run(_ tool: String, _ arguments: [String], allowing okCodes: Set<Int32> = []) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 || okCodes.contains(process.terminationStatus) else {
            throw WorkerProcess.Failure(description: "\(tool) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
    }
}
