import Foundation
import Synchronization

/// A program running in a tmux session on a private server, driven like a person would: keys in, screen out.
public final class TmuxSession: Sendable {
    public let name: String
    /// Each session has its own server (`tmux -L`), so tests never share or kill each other's.
    private let socket: String

    /// Whether tmux is installed.
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") }

    /// Starts `command` in a new session of `width`×`height`. When it exits, the pane
    /// stays with `EXITED <status>` on its last line.
    public init(name: String, width: Int, height: Int, command: [String]) throws {
        self.name = name
        socket = "fatchat-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let quoted = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        // Never capture new-session's output: the server it starts would hold that pipe open.
        try tmux(["start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";",
                  "new-session", "-d", "-s", name, "-x", "\(width)", "-y", "\(height)", "sh", "-c", quoted + "; echo EXITED $?"])
    }

    /// Types text literally.
    public func type(_ text: String) throws { try tmux(["send-keys", "-t", name, "-l", text]) }

    /// Presses a key by tmux's name for it: `Enter`, `C-c`, `F1`, `M-2`, `PPage`.
    public func press(_ key: String) throws { try tmux(["send-keys", "-t", name, key]) }

    /// The screen as text.
    public func capture() throws -> String { try tmux(["capture-pane", "-p", "-t", name], capturing: true) }

    /// The screen with its colours and attributes, as SGR escape sequences.
    public func captureWithStyles() throws -> String { try tmux(["capture-pane", "-p", "-e", "-t", name], capturing: true) }

    /// The screen as text, or empty if tmux could not be asked; for failure messages.
    public var screen: String { (try? capture()) ?? "" }

    /// Resizes the window, as a terminal window being resized.
    public func resize(width: Int, height: Int) throws {
        try tmux(["resize-window", "-t", name, "-x", "\(width)", "-y", "\(height)"])
    }

    /// Waits until the screen contains `text`.
    public func waitFor(_ text: String, timeout: Duration = .seconds(20)) async throws -> Bool {
        try await waitFor(anyOf: [text], timeout: timeout)
    }

    /// Waits until the screen contains one of `texts`.
    public func waitFor(anyOf texts: [String], timeout: Duration = .seconds(20)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let screen = try capture()
            if texts.contains(where: screen.contains) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        // A task that wakes past the deadline still looks once before it gives up.
        let screen = try capture()
        return texts.contains(where: screen.contains)
    }

    /// Starts looking for `text` now, on a thread of its own, until it shows or `timeout` passes. For
    /// what shows only for a moment, like a banner: it is seen while the test waits for something else,
    /// and while the test's task waits for a thread on a busy machine.
    public func watch(for text: String, timeout: Duration = .seconds(20)) -> Watch {
        let watch = Watch()
        let deadline = ContinuousClock.now + timeout
        let thread = Thread { [self] in
            var seen = false
            // One more look past the deadline, as in `waitFor`; a session that is gone ends the watch.
            while !seen, let screen = try? capture() {
                seen = screen.contains(text)
                if ContinuousClock.now >= deadline { break }
                if !seen { usleep(50_000) }
            }
            watch.end(seen: seen)
        }
        thread.start()
        return watch
    }

    /// Whether a `watch` saw its text.
    public final class Watch: Sendable {
        private let result = Mutex<Bool?>(nil)

        fileprivate func end(seen: Bool) { result.withLock { $0 = seen } }

        /// Waits until the text showed (true) or the watch's time ran out (false).
        public func seen() async throws -> Bool {
            while true {
                if let seen = result.withLock({ $0 }) { return seen }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Waits until the program exited.
    public func waitForExit(timeout: Duration = .seconds(20)) async throws -> Bool {
        try await waitFor("EXITED", timeout: timeout)
    }

    /// The program's process ID: the child of the pane's shell, once it started (a launcher that
    /// execs it, such as `setpriv` or `env`, keeps the ID).
    public func programID() -> pid_t? {
        guard let shell = pid_t((try? tmux(["display-message", "-p", "-t", name, "#{pane_pid}"], capturing: true))?
                  .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""),
              let children = try? String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8) else { return nil }
        return children.split(separator: " ").first.flatMap { pid_t($0) }
    }

    /// Ends the session's server and its program. `kill-server` sometimes left the
    /// server running, so its own pid is killed when it outlives the request.
    public func kill() {
        let pid = Int32((try? tmux(["display-message", "-p", "#{pid}"], capturing: true))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        _ = try? tmux(["kill-server"])
        if pid > 0 {
            for _ in 0..<20 where Glibc.kill(pid, 0) == 0 { usleep(50_000) }
            if Glibc.kill(pid, 0) == 0 { _ = Glibc.kill(pid, SIGKILL) }
        }
        unlink("/tmp/tmux-\(getuid())/\(socket)")
    }

    @discardableResult
    private func tmux(_ arguments: [String], capturing: Bool = false) throws -> String {
        try spawn(["/usr/bin/tmux", "-L", socket] + arguments, capturing: capturing)
    }
}
