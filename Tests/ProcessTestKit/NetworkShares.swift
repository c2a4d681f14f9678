import Foundation

/// One directory exported by a real server on 127.0.0.1 and mounted twice, as two hosts would see it.
///
/// bindfs and sshfs (default options: its 20 s attribute cache) come from `scripts/fuse-mounts.sh`;
/// GlusterFS (default mount options) from `scripts/gluster-volume.sh`; Samba through smbnetfs from
/// `scripts/samba-share.sh`. Every script waits, bounded, for its server and mounts to be ready,
/// and `down` stops only what it started, by PID.
public enum NetworkShare: String, CaseIterable, Sendable, CustomStringConvertible {
    case bindfs, sshfs, glusterfs, smbnetfs

    public var description: String { rawValue }

    /// The two mounts of one export: `a` and `b`.
    public struct Mounts: Sendable {
        public var a: URL
        public var b: URL
    }

    private static var scripts: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts")
    }

    private var script: URL {
        switch self {
        case .bindfs, .sshfs: Self.scripts.appendingPathComponent("fuse-mounts.sh")
        case .glusterfs: Self.scripts.appendingPathComponent("gluster-volume.sh")
        case .smbnetfs: Self.scripts.appendingPathComponent("samba-share.sh")
        }
    }

    /// Why this filesystem cannot be mounted here, or nil when it can.
    public var unavailableReason: String? {
        let result = Self.runScript(script, ["check"])
        guard result.status != 0 else { return nil }
        let text = result.errors.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? "\(script.lastPathComponent) check failed (\(result.status))" : text
    }

    /// Whether this filesystem can be mounted here; prints why not, so a skipped test says why.
    public var isAvailable: Bool {
        if let reason = unavailableReason {
            print("[skipped] \(self): \(reason)")
            return false
        }
        return true
    }

    /// Starts the server and mounts its export twice under `directory`.
    public func up(in directory: URL) throws -> Mounts {
        let result = Self.runScript(script, ["up", directory.path])
        guard result.status == 0 else {
            throw WorkerProcess.Failure(description: "\(script.lastPathComponent) up failed (\(result.status)): \(result.errors)")
        }
        switch self {
        case .bindfs:
            return Mounts(a: directory.appendingPathComponent("mnt/bindfs-a"), b: directory.appendingPathComponent("mnt/bindfs-b"))
        case .sshfs:
            return Mounts(a: directory.appendingPathComponent("mnt/sshfs-a"), b: directory.appendingPathComponent("mnt/sshfs-b"))
        case .glusterfs:
            return Mounts(a: directory.appendingPathComponent("mnt/a"), b: directory.appendingPathComponent("mnt/b"))
        case .smbnetfs:
            return Mounts(a: directory.appendingPathComponent("mnt/a/127.0.0.1/fc"), b: directory.appendingPathComponent("mnt/b/127.0.0.1/fc"))
        }
    }

    /// Stops the GlusterFS volume (its brick: both mounts fail with ENOTCONN), waits, and starts it
    /// again; returns once both mounts answer. GlusterFS only.
    public func bounce(in directory: URL, awayFor seconds: Int) throws {
        guard self == .glusterfs else { throw WorkerProcess.Failure(description: "bounce is built for glusterfs only") }
        let result = Self.runScript(script, ["bounce", directory.path, "\(seconds)"])
        guard result.status == 0 else {
            throw WorkerProcess.Failure(description: "\(script.lastPathComponent) bounce failed (\(result.status)): \(result.errors)")
        }
    }

    /// Unmounts both and stops the server; safe to call twice.
    public func down(in directory: URL) {
        let result = Self.runScript(script, ["down", directory.path])
        if result.status != 0 { print("\(script.lastPathComponent) down failed (\(result.status)): \(result.errors)") }
    }

    /// Runs a script to its end, killing it after two minutes. Its stderr goes to a file, not a
    /// pipe: the daemons it starts could hold a pipe open long after the script ended.
    static func runScript(_ script: URL, _ arguments: [String]) -> (status: Int32, errors: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("network-share-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        guard FileManager.default.createFile(atPath: log.path, contents: nil),
              let errors = try? FileHandle(forWritingTo: log) else {
            return (-1, "cannot create \(log.path)")
        }
        defer { try? errors.close() }
        let process: SpawnedProcess
        do {
            process = try SpawnedProcess(["/bin/bash", script.path] + arguments, stderr: .descriptor(errors.fileDescriptor))
        } catch {
            return (-1, "cannot run \(script.path): \(error)")
        }
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            process.signal(SIGKILL)
            process.waitUntilExit()
            return (-1, "\(script.path) \(arguments.joined(separator: " ")) timed out")
        }
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return (process.terminationStatus, text)
    }
}
