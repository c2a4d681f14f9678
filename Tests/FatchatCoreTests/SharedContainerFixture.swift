import Foundation
import ProcessTestKit

/// Real OS users sharing a container made by `fatchat init --group`, and the `fatchat` commands they run.
enum SharedContainerFixture {
    /// Makes the users and a container in a fresh directory all of them can reach; remove `root` when done.
    static func make(users: [String], group: String) async throws -> (root: URL, container: String) {
        try await GroupContainer.make(users: users, group: group)
    }

    /// Runs `fatchat ARGS` as `user` to the end.
    static func fatchat(_ user: String, _ arguments: [String], input: FileHandle? = nil) async throws -> WorkerProcess {
        let process = try WorkerProcess("\(user) \(arguments.first ?? "")", executable: "fatchat", arguments, launcher: OSUsers.launcher(for: user), input: input)
        _ = try await process.finish(timeout: .seconds(120))
        return process
    }

    /// A `fatchat bot` that keeps running as `user`, with its stdin held open by the test.
    static func runningBot(_ user: String, _ arguments: [String]) throws -> (WorkerProcess, Pipe) {
        let input = Pipe()
        let bot = try WorkerProcess("\(user) bot", executable: "fatchat", ["bot"] + arguments, launcher: OSUsers.launcher(for: user),
                                    input: input.fileHandleForReading)
        return (bot, input)
    }

    /// The JSON objects a `--json` command printed.
    static func objects(_ process: WorkerProcess) -> [[String: Any]] {
        process.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// The first JSON object `process` printed that matches, waiting up to `timeout` seconds for it.
    static func object(in process: WorkerProcess, timeout: Double = 60, _ matches: ([String: Any]) -> Bool) async -> [String: Any]? {
        let deadline = Date() + timeout
        while true {
            if let found = objects(process).first(where: matches) { return found }
            if Date() > deadline { return nil }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }
}
