import FatchatCore
import Foundation
import ProcessTestKit
import Testing

/// Typing, presence, the mouse, `/open` and `--notify-command` in real clients of two OS users, in tmux.
@Suite(.startsProcesses, .serialized, .enabled(if: TmuxSession.available && OSUsers.available, "needs tmux, and root to create OS users"))
struct PresenceTmuxTests {
    static let users = ["ada": "fatchat-alice", "bob": "fatchat-bob"]
    static let group = "fatchat-crew"

    /// A container shared by the clients of one test, and a folder their helper scripts write to.
    final class Sandbox {
        let root: URL
        let container: String
        let outputs: URL

        init(engine: String = "sqlite") async throws {
            try OSUsers.ensure(users: Array(PresenceTmuxTests.users.values), group: PresenceTmuxTests.group)
            root = URL(fileURLWithPath: "/tmp/fatchat-presence-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            outputs = root.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
            chmod(outputs.path, 0o777)
            container = root.appendingPathComponent("chat").path
            let made = try WorkerProcess("init", executable: "fatchat", ["init", container, "--group", PresenceTmuxTests.group, "--engine", engine])
            _ = try await made.finish(timeout: .seconds(60))
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        /// The client of `handle`'s OS user, in a new tmux session, with extra options and environment.
        func client(_ handle: String, _ options: [String] = [], environment: [String] = [], width: Int = 100) throws -> TmuxSession {
            let binary = try WorkerProcess.executable("fatchat").path
            let user = PresenceTmuxTests.users[handle] ?? handle
            return try TmuxSession(name: "fatchat-\(handle)-\(UUID().uuidString.prefix(6))", width: width, height: 30,
                                   command: OSUsers.launcher(for: user) + ["TERM=xterm-256color"] + environment
                                    + [binary, "--container", container, "--handle", handle] + options)
        }

        /// A script that writes its arguments, one a line, to `out/<name>`, as `argv` of a browser or hook.
        func recorder(_ name: String) throws -> (script: String, output: URL) {
            let output = outputs.appendingPathComponent(name)
            let script = root.appendingPathComponent("\(name).sh")
            try "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"\(output.path).tmp\" && mv \"\(output.path).tmp\" \"\(output.path)\"\n"
                .write(to: script, atomically: true, encoding: .utf8)
            chmod(script.path, 0o755)
            return (script.path, output)
        }

        /// Posts as `handle`'s OS user with `fatchat post`.
        func post(_ text: String, as handle: String, to channel: String = "general") async throws {
            let user = PresenceTmuxTests.users[handle] ?? handle
            let post = try WorkerProcess("post", executable: "fatchat", ["post", "--container", container, "--handle", handle, channel, text],
                                         launcher: OSUsers.launcher(for: user))
            let ended = try await post.finish(timeout: .seconds(60))
            #expect(ended == .success, "\(ended) \(post.errorText) \(post.lines)")
        }
    }

    /// The status line: the row that starts with the client's own handle in brackets.
    private func statusLine(_ session: TmuxSession, of handle: String) -> String {
        session.screen.split(separator: "\n").last { $0.hasPrefix(" [\(handle)]") }.map(String.init) ?? ""
    }

    @Test(arguments: ["sqlite", "log"])
    func typingShowsInTheOtherClientsStatusLineAndGoesAway(engine: String) async throws {
        let sandbox = try await Sandbox(engine: engine)
        let ada = try sandbox.client("ada")
        defer { ada.kill() }
        #expect(try await ada.waitFor("#general"))
        let bob = try sandbox.client("bob")
        defer { bob.kill() }
        #expect(try await bob.waitFor("#general"))
        #expect(try await ada.waitFor("2 members"))

        let typed = Date()
        try bob.type("hello th")
        let indicator = "bob (fatchat-bob) is typing…"
        #expect(await waitUntil(timeout: .seconds(30)) { statusLine(ada, of: "ada").contains(indicator) }, "\(ada.screen)")
        // Gone a few seconds after the last key (5 s from its arrival, plus a tick), and not before. It arrived after the
        // keys were typed, so it cannot be gone sooner than 5 s after them. Nothing looks at a fixed moment in between:
        // on a busy machine this test may see the indicator late, and a sleep may end late.
        #expect(await waitUntil(timeout: .seconds(20)) { !statusLine(ada, of: "ada").contains(indicator) }, "\(ada.screen)")
        #expect(Date().timeIntervalSince(typed) >= TypingNotice.lasts, "gone \(Date().timeIntervalSince(typed)) s after the keys")
        #expect(!statusLine(bob, of: "bob").contains("is typing"), "nobody sees their own typing")

        // Sending the line ends it at once; a slash command is never announced.
        try bob.type("x")
        #expect(await waitUntil(timeout: .seconds(30)) { statusLine(ada, of: "ada").contains(indicator) }, "\(ada.screen)")
        try bob.press("Enter")
        #expect(try await ada.waitFor("<bob (fatchat-bob)> hello thx"))
        #expect(await waitUntil(timeout: .seconds(3)) { !statusLine(ada, of: "ada").contains(indicator) }, "the message ends the indicator: \(ada.screen)")
        try bob.type("/who general")
        try await Task.sleep(for: .seconds(3))
        #expect(!statusLine(ada, of: "ada").contains(indicator), "a slash command is not typing: \(ada.screen)")
    }

    @Test func presenceShowsInWhoAndTheMemberList() async throws {
        let sandbox = try await Sandbox()
        let ada = try sandbox.client("ada", width: 140)
        defer { ada.kill() }
        #expect(try await ada.waitFor("#general"))
        let bob = try sandbox.client("bob")
        defer { bob.kill() }
        #expect(try await bob.waitFor("#general"))
        #expect(try await ada.waitFor("2 members"))

        try bob.type("/away lunch; back at 2")
        try bob.press("Enter")
        #expect(try await bob.waitFor("You are away: lunch; back at 2"))
        #expect(await waitUntil(timeout: .seconds(10)) { statusLine(bob, of: "bob").contains("away: lunch; back at 2") }, "\(bob.screen)")
        try ada.press("F2")
        #expect(try await ada.waitFor("◐ bob (fatchat-b"), "\(ada.screen)")
        #expect(ada.screen.contains("● ada (fatchat-a"), "\(ada.screen)")
        try ada.press("F2")
        try ada.type("/who")
        try ada.press("Enter")
        #expect(try await ada.waitFor("bob (fatchat-bob) [away: lunch; back at 2]"), "\(ada.screen)")
        #expect(ada.screen.contains("ada (fatchat-alice) [online]"), "\(ada.screen)")
        try ada.press("F2")

        // /away alone toggles back, as /back does.
        try bob.type("/away")
        try bob.press("Enter")
        #expect(try await bob.waitFor("You are back."))
        #expect(try await ada.waitFor("● bob (fatchat-b"), "\(ada.screen)")

        // A client that quits says offline at once.
        try bob.type("/quit")
        try bob.press("Enter")
        #expect(try await bob.waitForExit())
        #expect(try await ada.waitFor("○ bob (fatchat-b"), "\(ada.screen)")
        try ada.press("F2")
        try ada.type("/who")
        try ada.press("Enter")
        #expect(try await ada.waitFor("bob (fatchat-bob) [offline, last seen"), "\(ada.screen)")
    }

    /// An SGR mouse report (`ESC [ < b ; x ; y M`), 0-based cell, as a terminal sends one.
    private func mouse(_ session: TmuxSession, button: Int, row: Int, column: Int) throws {
        try session.type("\u{1B}[<\(button);\(column + 1);\(row + 1)M")
        if button < 64 { try session.type("\u{1B}[<\(button);\(column + 1);\(row + 1)m") }
    }

    @Test func theWheelScrollsAndAClickSwitchesChannelUnlessMouseIsOff() async throws {
        let sandbox = try await Sandbox()
        let ada = try sandbox.client("ada")
        defer { ada.kill() }
        #expect(try await ada.waitFor("#general"))
        try ada.type("/join ops")
        try ada.press("Enter")
        #expect(try await ada.waitFor("#ops and joined it"))
        #expect(ada.screen.hasPrefix(" #ops"), "\(ada.screen)")
        // A right click, which the client does not use, must not freeze it (ncurses once read on, blocking, for the next event).
        try mouse(ada, button: 2, row: 5, column: 40)
        // The channel list: #general on row 1, #ops on row 2. A click on #general switches to it.
        try mouse(ada, button: 0, row: 1, column: 3)
        #expect(await waitUntil(timeout: .seconds(10)) { ada.screen.hasPrefix(" #general") }, "\(ada.screen)")

        // Forty lines, more than a screen; the wheel brings the oldest back into view.
        try await sandbox.post((1...40).map { String(format: "wheel-%02d", $0) }.joined(separator: "\n"), as: "bob")
        #expect(try await ada.waitFor("wheel-40"), "a message arrives with no key pressed after the clicks: \(ada.screen)")
        #expect(!ada.screen.contains("wheel-01"), "\(ada.screen)")
        for _ in 0..<8 { try mouse(ada, button: 64, row: 10, column: 40) }
        #expect(await waitUntil(timeout: .seconds(10)) { ada.screen.contains("wheel-01") && !ada.screen.contains("wheel-40") }, "the wheel scrolled up: \(ada.screen)")
        for _ in 0..<12 { try mouse(ada, button: 65, row: 10, column: 40) }
        #expect(await waitUntil(timeout: .seconds(10)) { ada.screen.contains("wheel-40") }, "and down again: \(ada.screen)")

        // Pasting still arrives as one piece with the mouse on.
        try ada.type("\u{1B}[200~pasted one\npasted two\u{1B}[201~")
        try ada.press("Enter")
        #expect(try await ada.waitFor("<ada (fatchat-alice)> pasted one"), "\(ada.screen)")

        // With --no-mouse, a click changes nothing.
        ada.kill()
        let plain = try sandbox.client("ada", ["--no-mouse"])
        defer { plain.kill() }
        #expect(try await plain.waitFor("#general"))
        try plain.type("/join ops")
        try plain.press("Enter")
        #expect(await waitUntil(timeout: .seconds(20)) { plain.screen.hasPrefix(" #ops") }, "\(plain.screen)")
        try mouse(plain, button: 0, row: 1, column: 3)
        try await Task.sleep(for: .seconds(2))
        #expect(plain.screen.hasPrefix(" #ops"), "\(plain.screen)")
    }

    @Test func openAndTheNotifyHookGetExactArgumentsWithoutAShell() async throws {
        let sandbox = try await Sandbox()
        let browser = try sandbox.recorder("browser")
        let hook = try sandbox.recorder("hook")
        let canary = sandbox.outputs.appendingPathComponent("pwned").path
        let ada = try sandbox.client("ada", ["--notify-command", hook.script], environment: ["BROWSER=\(browser.script)"])
        defer { ada.kill() }
        #expect(try await ada.waitFor("#general"))

        let link = "https://example.com/a;b$(touch%20x)`id`?q=1&r=2"
        let text = "ada: see \(link) now; $(touch \(canary)) `touch \(canary)`"
        try await sandbox.post(text, as: "bob")
        #expect(try await ada.waitFor("see https://example.com"), "\(ada.screen)")
        #expect(await waitUntil(timeout: .seconds(20)) { FileManager.default.fileExists(atPath: hook.output.path) }, "the hook ran")
        #expect(try String(contentsOf: hook.output, encoding: .utf8) == "bob (fatchat-bob)\n#general\n\(text)\n")

        try ada.type("/open")
        try ada.press("Enter")
        #expect(await waitUntil(timeout: .seconds(20)) { FileManager.default.fileExists(atPath: browser.output.path) }, "the browser ran: \(ada.screen)")
        #expect(try String(contentsOf: browser.output, encoding: .utf8) == "\(link)\n")
        #expect(!FileManager.default.fileExists(atPath: canary), "no shell ran anything")
        #expect(try await ada.waitFor("Opening https://example.com"), "\(ada.screen)")

        // A link that is not http, https or mailto is never offered; asking past the newest link says how many there are.
        try await sandbox.post("javascript:alert(1) file:///etc/passwd -https", as: "bob")
        try ada.type("/open 2")
        try ada.press("Enter")
        #expect(try await ada.waitFor("#general has 1 link in its newest messages"), "\(ada.screen)")
    }
}
