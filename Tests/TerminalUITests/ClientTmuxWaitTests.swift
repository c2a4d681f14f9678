import Foundation
import ProcessTestKit
import Testing

/// The full-screen client while the shared file is locked or contended: it never waits on it.
@Suite(.startsProcesses, .serialized, .enabled(if: TmuxSession.available && HeldLock.available && OSUsers.available, "needs tmux, sqlite3 and root"))
struct ClientTmuxWaitTests {
    static let users = ["fcwaitalice", "fcwaitbob"]
    static let group = "fcwaitgroup"

    /// A container made by `fatchat init --group`.
    final class Sandbox {
        let root: URL
        let container: String

        init() async throws {
            try OSUsers.ensure(users: ClientTmuxWaitTests.users, group: ClientTmuxWaitTests.group)
            root = URL(fileURLWithPath: "/tmp/fatchat-wait-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            container = root.appendingPathComponent("chat").path
            let made = try WorkerProcess("init", executable: "fatchat", ["init", container, "--group", ClientTmuxWaitTests.group])
            #expect(try await made.finish(timeout: .seconds(60)) == .success, "\(made.errorText)")
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        /// The client of an OS user, in a new tmux session.
        func client(_ user: String) throws -> TmuxSession {
            let binary = try WorkerProcess.executable("fatchat").path
            return try TmuxSession(name: "fatchat-\(user)-\(UUID().uuidString.prefix(6))", width: 100, height: 24,
                                   command: OSUsers.launcher(for: user) + ["TERM=xterm-256color", binary, "--container", container])
        }

        /// What `fatchat channels` lists, as the user sees it.
        func channels() async throws -> [String] {
            let list = try WorkerProcess("channels", executable: "fatchat", ["channels", "--container", container],
                                         launcher: OSUsers.launcher(for: ClientTmuxWaitTests.users[1]))
            _ = try await list.finish(timeout: .seconds(60))
            return list.lines
        }
    }

    @Test func createUnderALockLeavesTheClientResponsiveAndSaysWhatItWaitsFor() async throws {
        let sandbox = try await Sandbox()
        let ada = try sandbox.client(Self.users[0])
        defer { ada.kill() }
        #expect(try await ada.waitFor("online"), "\(ada.screen)")

        let lock = try await HeldLock(path: sandbox.container + "/public.sqlite")
        try ada.type("/create lockedroom")
        try ada.press("Enter")
        // Typing still echoes, and the status line says what the client waits for.
        try ada.type("still typing")
        #expect(try await ada.waitFor("still typing"), "\(ada.screen)")
        #expect(try await ada.waitFor("waiting for the database: locked for"), "\(ada.screen)")
        #expect(try await !sandbox.channels().contains("#lockedroom"), "not created while the lock holds")

        lock.release()
        let deadline = ContinuousClock.now + .seconds(60)
        while try await !sandbox.channels().contains("#lockedroom"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(try await sandbox.channels().contains("#lockedroom"))
        #expect(try await ada.waitFor("online"), "the wait is over: \(ada.screen)")
        #expect(try !ada.capture().contains("waiting for the database"))
        #expect(try !ada.capture().contains("EXITED"))
    }

    @Test func aClientStartedUnderALockShowsTheWaitKeepsWhatIsTypedAndOpensOnceTheLockIsGone() async throws {
        let sandbox = try await Sandbox()
        let file = sandbox.container + "/public.sqlite"
        // An emptied WAL, as when no process has the file open: opening it then needs the write lock too.
        _ = try spawn(["/usr/bin/sqlite3", file, "PRAGMA wal_checkpoint(TRUNCATE);"], capturing: false)
        let lock = try await HeldLock(path: file)

        let ada = try sandbox.client(Self.users[0])
        defer { ada.kill() }
        #expect(try await ada.waitFor("waiting for the database: locked for"), "\(ada.screen)")
        try ada.type("typed while waiting")
        #expect(try await ada.waitFor("typed while waiting"), "\(ada.screen)")
        try ada.press("Enter")
        #expect(try !ada.capture().contains("EXITED"))

        lock.release()
        #expect(try await ada.waitFor("<\(Self.users[0])> typed while waiting", timeout: .seconds(60)), "\(ada.screen)")
        #expect(try await ada.waitFor("online"), "\(ada.screen)")
    }

    @Test func twoClientsStartingTogetherOnANewContainerBothGetIn() async throws {
        let sandbox = try await Sandbox()
        let clients = try Self.users.map { try sandbox.client($0) }
        defer { clients.forEach { $0.kill() } }
        for client in clients {
            #expect(try await client.waitFor("2 members", timeout: .seconds(60)), "\(client.screen)")
            #expect(try !client.capture().contains("EXITED"), "\(client.screen)")
        }
        #expect(try await sandbox.channels() == ["#general"])
    }
}
