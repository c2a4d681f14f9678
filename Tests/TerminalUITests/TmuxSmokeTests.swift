import Foundation
import ProcessTestKit
import Testing

/// Runs the TUIDemo binary inside a private tmux server and reads the screen back.
@Suite(.serialized) struct TmuxSmokeTests {
    /// The TUIDemo binary next to the test bundle.
    static var demoPath: String? {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("TUIDemo"),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(".build/debug/TUIDemo"),
        ]
        return candidates.map(\.path).first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static var hasTmux: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") }

    struct Tmux {
        let socket = "fatchat-tui-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let session = "demo"

        /// Runs a tmux command with posix_spawn and waitpid. Foundation's Process left the
        /// exited tmux client unreaped here and `waitUntilExit` never returned. Output is only
        /// captured for commands that do not start the server, which would keep a pipe open.
        @discardableResult
        func run(_ arguments: [String], capturing: Bool = false) throws -> String {
            try spawn(["/usr/bin/tmux", "-L", socket] + arguments, capturing: capturing)
        }

        /// Starts the session running `script`; the pane stays after it exits, so its last
        /// screen can be read and `kill-server` has no live process to wait for.
        func start(_ script: String) throws {
            try run(["start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";",
                     "new-session", "-d", "-s", session, "-x", "100", "-y", "30", "sh", "-c", script])
        }

        func capture() throws -> String { try run(["capture-pane", "-p", "-t", session], capturing: true) }

        /// Polls the pane until `predicate` holds, for up to `seconds`.
        func waitFor(_ seconds: Double = 10, _ predicate: (String) -> Bool) throws -> String {
            let deadline = Date().addingTimeInterval(seconds)
            var screen = try capture()
            while !predicate(screen), Date() < deadline {
                usleep(100_000)
                screen = try capture()
            }
            return screen
        }

        /// Stops this test's tmux server. `kill-server` sometimes left the server running
        /// here, so the server's own pid is killed as well when it outlives the request.
        func kill() {
            let pid = Int32((try? run(["display-message", "-p", "#{pid}"], capturing: true))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
            _ = try? run(["kill-server"])
            guard pid > 0 else { return }
            for _ in 0..<20 where Glibc.kill(pid, 0) == 0 { usleep(50_000) }
            if Glibc.kill(pid, 0) == 0 { _ = Glibc.kill(pid, SIGKILL) }
            unlink("/tmp/tmux-\(getuid())/\(socket)")
        }
    }

    @Test(.enabled(if: hasTmux && demoPath != nil))
    func frameAppearsTypingWorksAndTerminalIsRestoredAfterQ() throws {
        let demo = try #require(Self.demoPath)
        let tmux = Tmux()
        defer { tmux.kill() }
        let script = "TERM=xterm-256color '\(demo)'; echo EXIT=$?; stty -a | tr ' ;' '\\n\\n' | grep -x -e echo -e -echo -e icanon -e -icanon"
        try tmux.start(script)
        let frame = try tmux.waitFor { $0.contains("<alice> Hello everyone") }
        #expect(frame.contains("#general — Fatchat demo"))
        #expect(frame.contains("^[[2J"))              // the escape in a message is shown inert
        #expect(frame.contains("[#general]"))

        try tmux.run(["send-keys", "-t", tmux.session, "-l", "hello from tmux 你好"])
        try tmux.run(["send-keys", "-t", tmux.session, "Enter"])
        let posted = try tmux.waitFor { $0.contains("<me> hello from tmux 你好") }
        #expect(posted.contains("<me> hello from tmux 你好"))

        // A bracketed paste of two lines is one message: its second line is a continuation.
        try tmux.run(["set-buffer", "pasted one\npasted two"])
        try tmux.run(["paste-buffer", "-p", "-t", tmux.session])
        try tmux.run(["send-keys", "-t", tmux.session, "Enter"])
        let pasted = try tmux.waitFor { $0.contains("<me> pasted one") }
        #expect(pasted.contains("<me> pasted one"))
        #expect(pasted.contains("pasted two"))
        #expect(!pasted.contains("<me> pasted two"))

        try tmux.run(["send-keys", "-t", tmux.session, "q"])
        func lines(_ screen: String) -> [String] { screen.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) } }
        // grep prints a line at a time, and `stty -a` names icanon before echo: wait for both lines.
        let after = try tmux.waitFor { screen in
            let shown = lines(screen)
            return (shown.contains("icanon") || shown.contains("-icanon")) && (shown.contains("echo") || shown.contains("-echo"))
        }
        #expect(after.contains("EXIT=0"))
        let modes = lines(after)
        #expect(modes.contains("echo"))
        #expect(modes.contains("icanon"))
        #expect(!after.contains("<alice> Hello everyone"))   // the full-screen frame is gone
    }

    @Test(.enabled(if: hasTmux && demoPath != nil))
    func resizeRewrapsAndHelpOverlayOpensWithF1() throws {
        let demo = try #require(Self.demoPath)
        let tmux = Tmux()
        defer { tmux.kill() }
        try tmux.start("TERM=xterm-256color '\(demo)'; echo EXIT=$?")
        let wide = try tmux.waitFor { $0.contains("<bob> hey me") }
        #expect(wide.contains("#random"))

        try tmux.run(["resize-window", "-t", tmux.session, "-x", "50", "-y", "16"])
        let narrow = try tmux.waitFor { !$0.contains("#random") && $0.contains("<bob> hey me") }
        #expect(!narrow.contains("#random"))                 // channel list hidden under 60 columns
        #expect(narrow.split(separator: "\n").allSatisfy { $0.count <= 50 })

        try tmux.run(["send-keys", "-t", tmux.session, "F1"])
        let help = try tmux.waitFor { $0.contains("Keys:") }
        #expect(help.contains("Keys:"))
        try tmux.run(["send-keys", "-t", tmux.session, "Escape"])
        let closed = try tmux.waitFor { !$0.contains("Keys:") }
        #expect(!closed.contains("Keys:"))
        try tmux.run(["send-keys", "-t", tmux.session, "C-c"])
        let after = try tmux.waitFor { $0.contains("EXIT=") }
        #expect(after.contains("EXIT=0"))                    // Ctrl-C reaches the app, which quits cleanly
    }

    @Test(.enabled(if: hasTmux && demoPath != nil))
    func sigtermRestoresTheTerminal() throws {
        let demo = try #require(Self.demoPath)
        let tmux = Tmux()
        defer { tmux.kill() }
        try tmux.start("TERM=xterm-256color '\(demo)'; echo EXIT=$?; stty -a | tr ' ;' '\\n\\n' | grep -x -e echo -e -echo")
        _ = try tmux.waitFor { $0.contains("<bob> hey me") }
        let shell = try #require(Int32(try tmux.run(["display-message", "-p", "-t", tmux.session, "#{pane_pid}"], capturing: true)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        let children = try String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)
        let demoPID = try #require(children.split(separator: " ").first.flatMap { Int32($0) })
        #expect(kill(demoPID, SIGTERM) == 0)
        let after = try tmux.waitFor { $0.contains("EXIT=") && $0.contains("echo") }
        #expect(after.contains("EXIT="))
        #expect(after.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces) == "echo" })
        #expect(!after.contains("<bob> hey me"))             // endwin left the alternate screen
    }

    @Test(.enabled(if: hasTmux && demoPath != nil))
    func unknownTermIsAClearErrorNotACrash() throws {
        let demo = try #require(Self.demoPath)
        let tmux = Tmux()
        defer { tmux.kill() }
        try tmux.start("TERM=no-such-terminal '\(demo)'; echo EXIT=$?")
        let screen = try tmux.waitFor { $0.contains("EXIT=") }
        #expect(screen.contains("Unknown terminal type 'no-such-terminal'"))
        #expect(screen.contains("EXIT=1"))
    }
}

