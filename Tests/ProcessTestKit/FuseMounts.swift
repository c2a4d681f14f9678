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

    private static func runScript(_ arguments: [String]) -> (status: Int32, errors: String) {
        NetworkShare.runScript(script, arguments)
    }
}
