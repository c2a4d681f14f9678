import FatchatCore
import Foundation
import RecordStore

/// Idle clients each run as an OS user of its own, in a container their group shares: a hundred people
/// on one machine as they are. Each has a key and a presence record of its own, so each client reads and
/// checks every other's heartbeats. A crowd run as one user writes all its heartbeats over one record,
/// and a client reads one version of it a batch: that costs a tenth as much, and is no one's real case.
///
/// It needs root, to make the users (`fcbench0`, `fcbench1`, … in the group `fcbench`) and to start
/// their clients through `setpriv`; it removes the users it made when it ends.
struct UserCrowd {
    static let group = "fcbench"
    static let setpriv = "/usr/bin/setpriv"

    let users: [String]
    /// The users this run made, which it removes.
    private let made: [String]
    private let place: URL

    /// Why a crowd of users cannot run here, or nil when it can.
    static var unavailable: String? {
        guard getuid() == 0, [setpriv, useradd].allSatisfy(FileManager.default.isExecutableFile(atPath:)) else {
            return "it needs root, \(useradd) and \(setpriv), to make the users and run a client as each"
        }
        return nil
    }

    private static let useradd = "/usr/sbin/useradd"

    /// Makes `count` users and their shared container under `place`, which every user must be able to reach.
    init(count: Int, in place: URL) throws {
        users = (0..<count).map { "fcbench\($0)" }
        made = users.filter { getpwnam($0) == nil }
        try Self.run("/usr/sbin/groupadd", ["--force", Self.group])
        // No home and no login: a user only to run a client as.
        for user in made { try Self.run(Self.useradd, ["--no-create-home", "--no-user-group", "--gid", Self.group, "--shell", "/usr/sbin/nologin", user]) }
        self.place = place
        try? FileManager.default.removeItem(at: place)
        try FileManager.default.createDirectory(at: place, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        _ = try SharedContainer.make(at: place.appendingPathComponent("chat"), group: Self.group, mode: nil)
        for user in users {
            guard let entry = getpwnam(user) else { throw BenchError("useradd made no user \(user).") }
            let privateData = privateDirectory(user)
            try FileManager.default.createDirectory(at: privateData, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            guard chown(privateData.path, entry.pointee.pw_uid, entry.pointee.pw_gid) == 0 else { throw BenchError("chown \(privateData.path): \(String(cString: strerror(errno)))") }
        }
    }

    /// Starts `fatchat-bench child idle` with `arguments` as each user, on the shared container.
    func start(_ arguments: [String]) throws -> [Child] {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return try users.map { user in
            try Child(executable: Self.setpriv, ["--reuid=\(user)", "--regid=\(Self.group)", "--init-groups", "--", executable, "child", "idle",
                                                 "--container", place.appendingPathComponent("chat").path,
                                                 "--private-data", privateDirectory(user).path] + arguments)
        }
    }

    /// Removes the container, and the users this run made.
    func remove() {
        try? FileManager.default.removeItem(at: place)
        for user in made { try? Self.run("/usr/sbin/userdel", [user]) }
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("\(tool) \(arguments.joined(separator: " ")) exited \(process.terminationStatus).")
        }
    }

    private func privateDirectory(_ user: String) -> URL { place.appendingPathComponent("private-\(user)") }
}
