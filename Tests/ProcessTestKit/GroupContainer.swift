import Foundation

/// A container made by `fatchat init --group` for real OS users, as a group on one machine shares it.
public enum GroupContainer {
    /// Makes the users, their group and a container in a fresh directory they can all reach; remove `root` when done.
    public static func make(users: [String], group: String) async throws -> (root: URL, container: String) {
        try OSUsers.ensure(users: users, group: group)
        let root = URL(fileURLWithPath: "/tmp/fatchat-group-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let container = root.appendingPathComponent("chat").path
        let made = try WorkerProcess("init", executable: "fatchat", ["init", container, "--group", group])
        guard try await made.finish(timeout: .seconds(60)) == .success else {
            try? FileManager.default.removeItem(at: root)
            throw WorkerProcess.Failure(description: "fatchat init \(container) --group \(group) failed: \(made.errorText)")
        }
        return (root, container)
    }
}
