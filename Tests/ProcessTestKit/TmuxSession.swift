import Foundation

/// A program running in a detached tmux session, driven like a person would: keys in, screen out.
public final class TmuxSession: Sendable {
    public let name: String

    /// Whether tmux is installed.
    public static var available: Bool {
        ["/usr/bin/tmux", "/usr/local/bin/tmux"].contains { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts `command` in a new session of `width`×`height`; when it exits, the session stays for inspection.
    public init(name: String, width: Int, height: Int, command: [String]) throws {
        self.name = name
        let quoted = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        try Self.tmux(["new-session", "-d", "-s", name, "-x", "\(width)", "-y", "\(height)", quoted + "; echo EXITED $?; sleep 60"])
    }

    /// Types text literally.
    public func type(_ text: String) throws { try Self.tmux(["send-keys", "-t", name, "-l", text]) }

    /// Presses a key by tmux's name for it: `Enter`, `C-c`, `F1`, `M-2`, `PPage`.
    public func press(_ key: String) throws { try Self.tmux(["send-keys", "-t", name, key]) }

    /// The screen as text.
    public func capture() throws -> String { try Self.tmux(["capture-pane", "-p", "-t", name]) }

    /// The screen as text, or empty if tmux could not be asked; for failure messages.
    public var screen: String { (try? capture()) ?? "" }

    /// Resizes the window, as a terminal window being resized.
    public func resize(width: Int, height: Int) throws {
        try Self.tmux(["resize-window", "-t", name, "-x", "\(width)", "-y", "\(height)"])
    }

    /// Waits until the screen contains `text`.
    public func waitFor(_ text: String, timeout: Duration = .seconds(20)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try capture().contains(text) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Waits until the program exited (the session then shows `EXITED`).
    public func waitForExit(timeout: Duration = .seconds(20)) async throws -> Bool {
        try await waitFor("EXITED", timeout: timeout)
    }

    /// Ends the session and its program.
    public func kill() { _ = try? Self.tmux(["kill-session", "-t", name]) }

    @discardableResult
    static func tmux(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["tmux"] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw WorkerProcess.Failure(description: "tmux \(arguments.first ?? "") failed with status \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
