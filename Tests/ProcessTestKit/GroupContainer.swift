import Foundation

/// A container made by `fatchat init --group` for real OS users, as a group on one machine shares it.
public enum GroupContainer {
    /// Makes the users, their group and a container in a fresh directory they can all reach; remove `root` when done.
    /// `arguments` go to `fatchat init` as well, e.g. `--engine log`.
    public static func make(users: [String], group: String, arguments: [String] = []) async throws -> (root: URL, container: String) {
        try OSUsers.ensure(users: users, group: group)
        return try await initialize(named: "fatchat-group", arguments: ["--group", group] + arguments)
    }

    /// Runs `fatchat bot --json` on `container` as the OS user `user`, feeding it `lines` (one JSON command
    /// each), and waits for it to end.
    public static func bot(_ user: String, _ container: String, _ lines: [String]) async throws -> WorkerProcess {
        let process = try WorkerProcess("\(user) bot", executable: "fatchat", ["bot", "--json", "--container", container],
                                        launcher: OSUsers.launcher(for: user), input: try WorkerProcess.input(lines.map { $0 + "\n" }.joined()))
        _ = try await process.finish(timeout: .seconds(120))
        return process
    }

    /// Makes a container for the user running the tests alone (`fatchat init` with no group); remove `root` when done.
    public static func makePrivate() async throws -> (root: URL, container: String) {
        try await initialize(named: "fatchat-private", arguments: [])
    }

    private static func initialize(named prefix: String, arguments: [String]) async throws -> (root: URL, container: String) {
        let root = URL(fileURLWithPath: "/tmp/\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let container = root.appendingPathComponent("chat").path
        let made = try WorkerProcess("init", executable: "fatchat", ["init", container] + arguments)
        guard try await made.finish(timeout: .seconds(60)) == .success else {
            try? FileManager.default.removeItem(at: root)
            throw WorkerProcess.Failure(description: "fatchat init \(container) \(arguments.joined(separator: " ")) failed: \(made.errorText)")
        }
        return (root, container)
    }
}
