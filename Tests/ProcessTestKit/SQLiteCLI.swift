import Foundation

/// The real `sqlite3` command-line tool: how a member of a shared container writes its files behind Fatchat's back.
public enum SQLiteCLI {
    /// Why a run of `sqlite3` failed.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `sql` on the database at `path`, optionally as another OS user (`launcher`); throws unless sqlite3 exits 0.
    /// Returns what it printed.
    ///
    /// sqlite3 waits up to 10 s for a lock that a running client holds, as a member who writes the
    /// file by hand would retry: without it, a write that came while a client committed failed at once
    /// ("database is locked"), and the test with it.
    @discardableResult
    public static func run(_ path: String, _ sql: String, launcher: [String] = []) throws -> String {
        let argv = launcher + ["/usr/bin/sqlite3", "-cmd", ".timeout 10000", path, sql]
        let process = try SpawnedProcess(argv, stdout: .pipe, stderr: .pipe)
        let printed = String(decoding: process.output?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        let text = String(decoding: process.errors?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "sqlite3 exited \(process.terminationStatus): \(text)")
        }
        return printed
    }
}
