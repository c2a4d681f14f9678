import Foundation

/// A throwaway GlusterFS volume on 127.0.0.1, mounted twice with the FUSE client's default options
/// (its 1 s attribute and entry cache), made and removed by `scripts/gluster-volume.sh` (as root).
///
/// The script is found beside this source file, so this needs a checkout of the repository.
struct GlusterVolume {
    let root: URL
    var a: URL { root.appendingPathComponent("mnt/a") }
    var b: URL { root.appendingPathComponent("mnt/b") }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/gluster-volume.sh")

    /// Why the volume cannot be made here, or nil if it can.
    func unavailableReason() -> String? {
        guard FileManager.default.fileExists(atPath: Self.script.path) else { return "\(Self.script.path) is not there (run from a checkout)" }
        let (status, errors) = run(["check"])
        return status == 0 ? nil : (errors.isEmpty ? "gluster-volume.sh check failed (\(status))" : errors)
    }

    func up() throws {
        try? FileManager.default.removeItem(at: root)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let (status, errors) = run(["up", root.path])
        guard status == 0 else { throw BenchError("gluster-volume.sh up failed (\(status)): \(errors)") }
    }

    func down() {
        _ = run(["down", root.path])
        try? FileManager.default.removeItem(at: root)
    }

    /// Runs the script to its end (two minutes at most) and returns its status and stderr. Its stderr goes
    /// to a file, not a pipe: the daemons it starts would hold a pipe open for as long as they live.
    private func run(_ arguments: [String]) -> (Int32, String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("gluster-volume-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        guard FileManager.default.createFile(atPath: log.path, contents: nil), let errors = try? FileHandle(forWritingTo: log) else {
            return (-1, "cannot create \(log.path)")
        }
        defer { try? errors.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Self.script.path] + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        guard (try? process.run()) != nil else { return (-1, "cannot run \(Self.script.path)") }
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return (-1, "gluster-volume.sh \(arguments.joined(separator: " ")) timed out")
        }
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return (process.terminationStatus, text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
