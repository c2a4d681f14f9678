import Foundation

/// A real `sqlite3` process that holds the write lock of a database file, as
/// another user sitting in `BEGIN EXCLUSIVE` would, until the test releases it.
public final class HeldLock {
    private let process: SpawnedProcess

    /// Starts `sqlite3 PATH`, begins an exclusive transaction, and returns once sqlite3 says it holds it.
    ///
    /// `vfs` names SQLite's locking: `unix-dotfile` holds the `PATH.lock` a network-mode container uses.
    /// sqlite3 prints a marker only after `BEGIN EXCLUSIVE` succeeded (`.bail on` ends it otherwise), so
    /// nothing else has to touch the file to find out: probing it with more connections kept a
    /// dotfile lock busy enough, on a loaded machine, that sqlite3 never got it.
    public init(path: String, vfs: String? = nil) async throws {
        process = try SpawnedProcess(["/usr/bin/sqlite3"] + Self.vfsArguments(vfs) + [path], stdin: .pipe, stdout: .pipe)
        process.input?.write(Data(".bail on\n.timeout 30000\nBEGIN EXCLUSIVE;\nSELECT 'held';\n".utf8))
        guard let reader = process.output else { throw SpawnError(call: "pipe") }
        let said = await withCheckedContinuation { (done: CheckedContinuation<String, Never>) in
            Thread.detachNewThread {
                var text = ""
                while !text.contains("held") {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                }
                done.resume(returning: text)
            }
        }
        guard said.contains("held") else {
            release()
            throw WorkerProcess.Failure(description: "sqlite3 did not get the write lock on \(path) within 30 s")
        }
    }

    deinit { release() }

    /// Ends the transaction and the `sqlite3` process.
    public func release() {
        guard process.isRunning else { return }
        process.input?.write(Data("ROLLBACK;\n.quit\n".utf8))
        try? process.input?.close()
        process.waitUntilExit()
    }

    private static func vfsArguments(_ vfs: String?) -> [String] { vfs.map { ["-vfs", $0] } ?? [] }

    /// Whether `sqlite3` is installed.
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") }
}
