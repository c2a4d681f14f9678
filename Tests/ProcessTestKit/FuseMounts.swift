import Foundation

/// Drives `scripts/fuse-mounts.sh`.
public enum FuseMounts {
    /// `scripts/fuse-mounts.sh` in this checkout.
    public static var script: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/fuse-mounts.sh")
    }

    /// Whether FUSE and the tools are here; prints why not when they are not.
    public static func isAvailable() -> Bool {
        let result = runScript(["check"])
        if result.status != 0 {
            print("FuseMountTests skipped: \(result.errors.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        return result.status == 0
    }

    /// Mounts `directory/shared` four times; returns `directory/mnt`, which holds the mount points.
    public static func up(in directory: URL) async throws -> URL {
        let result = runScript(["up", directory.path])
        guard result.status == 0 else {
            throw WorkerProcess.Failure(description: "fuse-mounts.sh up failed (\(result.status)): \(result.errors)")
        }
        return directory.appendingPathComponent("mnt")
    }

    /// Unmounts everything and stops the sshd; safe to call twice.
    public static func down(in directory: URL) {
        let result = runScript(["down", directory.path])
        if result.status != 0 { print("fuse-mounts.sh down failed (\(result.status)): \(result.errors)") }
    }

    /// Runs the script to its end, killing it after two minutes.
    ///
    /// Its stderr goes to a file, not a pipe: the daemons it starts could hold
    /// a pipe open long after the script itself ended.
    private static func runScript(_ arguments: [String]) -> (status: Int32, errors: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("fuse-mounts-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        guard FileManager.default.createFile(atPath: log.path, contents: nil),
              let errors = try? FileHandle(forWritingTo: log) else {
            return (-1, "cannot create \(log.path)")
        }
        defer { try? errors.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script.path] + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        do { try process.run() } catch { return (-1, "cannot run \(script.path): \(error)") }
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return (-1, "\(script.path) \(arguments.joined(separator: " ")) timed out")
        }
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return (process.terminationStatus, text)
    }
}
