import Foundation

/// A real `sqlite3` process that holds the write lock of a database file, as
/// another user sitting in `BEGIN EXCLUSIVE` would, until the test releases it.
public final class HeldLock {
    private let process = Process()
    private let input = Pipe()

    /// Starts `sqlite3 PATH`, begins an exclusive transaction, and returns once another connection is refused.
    ///
    /// `vfs` names SQLite's locking: `unix-dotfile` holds the `PATH.lock` a network-mode container uses.
    public init(path: String, vfs: String? = nil) async throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = Self.vfsArguments(vfs) + [path]
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // It waits for the lock if the probe below happens to hold it at that moment.
        input.fileHandleForWriting.write(Data(".timeout 2000\nBEGIN EXCLUSIVE;\n".utf8))
        let deadline = ContinuousClock.now + .seconds(30)
        var nextAttempt = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < deadline {
            if try Self.isLocked(path, vfs: vfs) { return }
            // On a loaded machine the probes can keep a dotfile lock busy until sqlite3's own
            // wait runs out and its BEGIN fails; then it sits outside any transaction, so ask again.
            if ContinuousClock.now > nextAttempt {
                input.fileHandleForWriting.write(Data("ROLLBACK;\nBEGIN EXCLUSIVE;\n".utf8))
                nextAttempt = ContinuousClock.now + .seconds(3)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        release()
        throw WorkerProcess.Failure(description: "sqlite3 did not get the write lock on \(path) within 30 s")
    }

    deinit { release() }

    /// Whether a write transaction on `path` is refused at once.
    public static func isLocked(_ path: String, vfs: String? = nil) throws -> Bool {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        probe.arguments = vfsArguments(vfs) + [path, "BEGIN IMMEDIATE; ROLLBACK;"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        try probe.run()
        probe.waitUntilExit()
        return probe.terminationStatus != 0
    }

    /// Ends the transaction and the `sqlite3` process.
    public func release() {
        guard process.isRunning else { return }
        input.fileHandleForWriting.write(Data("ROLLBACK;\n.quit\n".utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    private static func vfsArguments(_ vfs: String?) -> [String] { vfs.map { ["-vfs", $0] } ?? [] }

    /// Whether `sqlite3` is installed.
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") }
}
