import Foundation
import ProcessTestKit
import Testing

/// The full-screen client on a network-mode container, where every read takes the dotfile lock: a held lock never freezes it.
@Suite(.startsProcesses, .serialized, .enabled(if: TmuxSession.available && HeldLock.available && OSUsers.available, "needs tmux, sqlite3 and root"))
struct ClientNetworkLockTests {
    static let user = "fcnetalice"
    static let group = "fcnetgroup"

    /// A network-mode container made by `fatchat init --group --fs-mode network`.
    final class Sandbox {
        let root: URL
        let container: String

        init() async throws {
            try OSUsers.ensure(users: [ClientNetworkLockTests.user], group: ClientNetworkLockTests.group)
            root = URL(fileURLWithPath: "/tmp/fatchat-netlock-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            container = root.appendingPathComponent("chat").path
            let made = try WorkerProcess("init", executable: "fatchat",
                                         ["init", container, "--group", ClientNetworkLockTests.group, "--fs-mode", "network"])
            #expect(try await made.finish(timeout: .seconds(60)) == .success, "\(made.errorText)")
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        /// The user's client, in a new tmux session.
        func client() throws -> TmuxSession {
            let binary = try WorkerProcess.executable("fatchat").path
            return try TmuxSession(name: "fatchat-netlock-\(UUID().uuidString.prefix(6))", width: 100, height: 24,
                                   command: OSUsers.launcher(for: ClientNetworkLockTests.user)
                                       + ["TERM=xterm-256color", binary, "--container", container, "--fs-mode", "network"])
        }
    }

    @Test func switchingChannelUnderADotfileLockKeepsTheClientResponsiveAndShowsTheChannelOnceFree() async throws {
        let sandbox = try await Sandbox()
        let ada = try sandbox.client()
        defer { ada.kill() }
        #expect(try await ada.waitFor("online"), "\(ada.screen)")
        for line in ["/join ops", "ops history line", "/join general", "general line"] {
            try ada.type(line)
            try ada.press("Enter")
        }
        #expect(try await ada.waitFor("<\(Self.user)> general line"), "\(ada.screen)")
        #expect(try await ada.waitFor("online"), "\(ada.screen)")
        // Everything typed has reached the file before it is locked: #ops is listed and nothing waits in the outbox.
        // (On a busy machine the echo of the last line comes while the join of #ops is still pending.)
        let settled = ContinuousClock.now + .seconds(60)
        func unsettled() throws -> Bool {
            let screen = try ada.capture()
            return !screen.contains("#ops") || screen.contains("pending")
        }
        while try unsettled(), ContinuousClock.now < settled { try await Task.sleep(for: .milliseconds(100)) }
        #expect(try !unsettled(), "\(ada.screen)")

        let lock = try await HeldLock(path: sandbox.container + "/public.sqlite", vfs: "unix-dotfile")
        // Alt-2: #ops, whose history has to be read from the locked file.
        try ada.press("M-2")
        try ada.type("still typing")
        #expect(try await ada.waitFor("still typing"), "typing echoes while the file is locked: \(ada.screen)")
        #expect(try await ada.waitFor("another process holds it locked"), "\(ada.screen)")
        #expect(try await ada.waitFor("waiting for the database: locked"), "\(ada.screen)")
        #expect(try !ada.capture().contains("ops history line"))

        lock.release()
        #expect(try await ada.waitFor("ops history line", timeout: .seconds(60)), "the channel shows once the lock is gone: \(ada.screen)")
        #expect(try await ada.waitFor("online"), "\(ada.screen)")
        #expect(try !ada.capture().contains("waiting for the database"))
        #expect(try ada.capture().contains("still typing"), "what was typed is kept")
        #expect(try !ada.capture().contains("EXITED"))
    }
}
