import Foundation
import ProcessTestKit
import Testing

/// A client killed by a signal it cannot survive leaves the terminal as it found it: on the
/// main screen, in cooked mode with echo, and its exit status still names the signal.
@Suite(.startsProcesses, .serialized, .enabled(if: TmuxSession.available, "needs tmux"))
struct CrashRestoreTests {
    /// The client's process: the one whose command line is the binary with this container.
    private func clientPID(binary: String, container: String) -> Int32? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry),
                  let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if arguments.first == binary, arguments.contains(container) { return pid }
        }
        return nil
    }

    @Test(arguments: [("SEGV", SIGSEGV), ("ILL", SIGILL), ("ABRT", SIGABRT), ("BUS", SIGBUS), ("TRAP", SIGTRAP)])
    func aCrashSignalRestoresTheTerminal(name: String, signal: Int32) async throws {
        let root = URL(fileURLWithPath: "/tmp/fatchat-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let container = root.appendingPathComponent("chat").path
        let made = try WorkerProcess("init", executable: "fatchat", ["init", container])
        #expect(try await made.finish(timeout: .seconds(60)) == .success, "\(made.errorText)")

        let binary = try WorkerProcess.executable("fatchat").path
        // After the client, the same shell prints its status and the tty's modes.
        let script = "\"$@\"; echo STATUS $?; stty -a"
        let session = try TmuxSession(name: "fatchat-crash-\(name)", width: 100, height: 30, command: [
            "/bin/sh", "-c", script, "sh", "/usr/bin/env", "TERM=xterm-256color",
            "XDG_DATA_HOME=\(root.appendingPathComponent("data").path)", binary, "--container", container,
        ])
        defer { session.kill() }
        #expect(try await session.waitFor("[#general]"), "the client started: \(session.screen)")
        let pid = try #require(clientPID(binary: binary, container: container))

        #expect(kill(pid, signal) == 0)
        #expect(try await session.waitForExit(), "\(session.screen)")
        let screen = try session.capture()
        #expect(screen.contains("STATUS \(128 + signal)"), "the exit status names SIG\(name): \(screen)")
        #expect(!screen.contains("[#general]"), "back on the main screen, the client's frame gone: \(screen)")
        let modes = Set(screen.split(whereSeparator: { $0 == " " || $0 == ";" || $0 == "\n" }).map(String.init))
        #expect(modes.contains("icanon") && modes.contains("echo"), "cooked mode with echo: \(screen)")
        #expect(!modes.contains("-icanon") && !modes.contains("-echo"), "\(screen)")
    }
}
