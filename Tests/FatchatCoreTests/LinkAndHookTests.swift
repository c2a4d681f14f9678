import Foundation
@testable import FatchatCore
import Testing

/// `/open` and `--notify-command`: which links are found and which are refused, and the exact
/// arguments a program is started with (through a real process that records its argv).
struct LinkAndHookTests {
    @Test func linksAreFoundWithoutTheirTrailingPunctuation() {
        #expect(Links.find(in: "see https://example.com/a?b=1, and (http://x.org/wiki/Foo_(bar)).") ==
                ["https://example.com/a?b=1", "http://x.org/wiki/Foo_(bar)"])
        #expect(Links.find(in: "<https://a.example/x> mail mailto:ada@example.com") == ["https://a.example/x", "mailto:ada@example.com"])
        #expect(Links.find(in: "file:///etc/passwd javascript:alert(1) ftp://x") == [])
    }

    @Test func hostileLinksAreRefused() throws {
        for bad in ["-https://x.org", "https://x.org/\u{1B}]52;c;x\u{07}", "https://x.org/a b", "file:///etc/passwd", "https://",
                    "https://x.org/" + String(repeating: "a", count: 3000), "https://x.org/\u{202E}gpj", "javascript:alert(1)"] {
            #expect(throws: CommandError.self, "\(bad.debugDescription)") { try Links.check(bad) }
        }
        #expect(try Links.check("https://x.org/a;b$(touch%20x)`id`") == "https://x.org/a;b$(touch%20x)`id`")
    }

    @Test func theBrowserIsBrowserElseXdgOpen() {
        #expect(Links.browser(environment: [:]) == "xdg-open")
        #expect(Links.browser(environment: ["BROWSER": "firefox:chromium"]) == "firefox")
        #expect(Links.browser(environment: ["BROWSER": " "]) == "xdg-open")
    }

    @Test func hookArgumentsAreInertAndBounded() {
        let args = NotifyHook.arguments(sender: "eve\u{1B}[2J", channel: "#ops", text: "hi\nada $(rm -rf ~); `id`" + String(repeating: "x", count: 5000))
        #expect(args.count == 3)
        #expect(args[0] == "eve^[[2J")
        #expect(args[1] == "#ops")
        #expect(args[2].hasPrefix("hi ada $(rm -rf ~); `id`"))
        #expect(args[2].count == NotifyHook.maximumText)
    }

    @Test func aHookGetsItsArgumentsLiterallyAndIsReaped() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fatchat-hook-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("record.sh")
        let out = dir.appendingPathComponent("argv")
        try "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"\(out.path).tmp\" && mv \"\(out.path).tmp\" \"\(out.path)\"\n"
            .write(to: script, atomically: true, encoding: .utf8)
        chmod(script.path, 0o755)
        let hook = NotifyHook(program: script.path)
        let canary = dir.appendingPathComponent("pwned").path
        // A script written a moment ago can still be open for writing in a child that another test's
        // spawn forked meanwhile, and exec then fails with ETXTBSY until that child execs: so a few tries.
        var started = false
        for _ in 0..<50 where !started {
            started = hook.run(sender: "bob", channel: "#general", text: "ada: $(touch \(canary)); `touch \(canary)` | x")
            if !started { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(started)
        let deadline = Date() + 120
        while Date() < deadline, !FileManager.default.fileExists(atPath: out.path) { try await Task.sleep(for: .milliseconds(50)) }
        let argv = try String(contentsOf: out, encoding: .utf8)
        #expect(argv == "bob\n#general\nada: $(touch \(canary)); `touch \(canary)` | x\n")
        #expect(!FileManager.default.fileExists(atPath: canary), "no shell ran the text")
        try await reapAll(hook.processes)
        #expect(hook.processes.running == 0, "the finished hook was reaped")
    }

    @Test func aHangingHookIsStoppedAndNeverHoldsUpTheCaller() async throws {
        let processes = DetachedProcesses()
        let began = Date()
        let pid = try processes.start(["/bin/sleep", "600"], limit: 0.5)
        // Roomy for a slow spawn: a start that waited would take the program's 600 s (only reap() enforces the limit).
        #expect(Date().timeIntervalSince(began) < 10, "start does not wait for the program")
        #expect(kill(pid, 0) == 0)
        try await reapAll(processes)
        #expect(processes.running == 0)
        #expect(kill(pid, 0) != 0, "stopped and reaped")
    }

    /// Reaps until no helper runs, for up to 1,200 tries 100 ms apart. Tries, not a deadline: on a loaded
    /// machine the test's task can stay suspended past any deadline, and must still reap once it resumes.
    private func reapAll(_ processes: DetachedProcesses) async throws {
        var tries = 0
        while processes.running > 0, tries < 1_200 {
            processes.reap()
            tries += 1
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    @Test func aMissingProgramIsAClearError() {
        #expect(throws: DetachedProcesses.Failure.self) { try DetachedProcesses().start(["/nonexistent/browser", "https://x.org"]) }
    }
}
