import Foundation
import ProcessTestKit
import Testing

/// Two real clients in tmux, run by two real OS users, driven with send-keys and read with capture-pane.
@Suite(.startsProcesses, .serialized, .enabled(if: TmuxSession.available && OSUsers.available, "needs tmux, and root to create OS users"))
struct ClientTmuxTests {
    /// Handles and the OS users who type them; a handle is not its user's name, so lines read `<ada (fatchat-alice)>`.
    static let users = ["ada": "fatchat-alice", "bob": "fatchat-bob"]
    static let group = "fatchat-crew"

    /// A container made by `fatchat init --group`, shared by the clients of one test.
    final class Sandbox {
        let root: URL
        let container: String

        init() async throws {
            try OSUsers.ensure(users: Array(ClientTmuxTests.users.values), group: ClientTmuxTests.group)
            root = URL(fileURLWithPath: "/tmp/fatchat-tui-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            container = root.appendingPathComponent("chat").path
            let made = try WorkerProcess("init", executable: "fatchat", ["init", container, "--group", ClientTmuxTests.group])
            _ = try await made.finish(timeout: .seconds(60))
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        /// The client of `handle`'s OS user, in a new tmux session.
        func client(_ handle: String, width: Int = 100, height: Int = 30, term: String = "xterm-256color") throws -> TmuxSession {
            let binary = try WorkerProcess.executable("fatchat").path
            let user = ClientTmuxTests.users[handle] ?? handle
            return try TmuxSession(name: "fatchat-\(handle)-\(UUID().uuidString.prefix(6))", width: width, height: height,
                                   command: OSUsers.launcher(for: user) + ["TERM=\(term)", binary, "--container", container, "--handle", handle])
        }
    }

    @Test func aMessageTypedInOneClientShowsInTheOther() async throws {
        let sandbox = try await Sandbox()
        let ada = try sandbox.client("ada")
        defer { ada.kill() }
        #expect(try await ada.waitFor("#general"))
        let bob = try sandbox.client("bob")
        defer { bob.kill() }
        #expect(try await bob.waitFor("#general"))

        try ada.type("hello bob, 你好 🍕")
        try ada.press("Enter")
        #expect(try await bob.waitFor("<ada (fatchat-alice)> hello bob, 你好 🍕"), "\(bob.screen)")
        #expect(try await ada.waitFor("<ada (fatchat-alice)> hello bob"))
        // The status line shows the handle; the title the channel and its member count.
        #expect(try bob.capture().contains("[bob]"))
        #expect(try await bob.waitFor("2 members"))
    }

    @Test func aMessageInAnotherChannelRaisesABannerAndABadge() async throws {
        let sandbox = try await Sandbox()
        let ada = try sandbox.client("ada")
        defer { ada.kill() }
        #expect(try await ada.waitFor("#general"))
        try ada.type("/join ops")
        try ada.press("Enter")
        try ada.type("/join general")
        try ada.press("Enter")
        #expect(try await ada.waitFor("joined #general"))

        let bob = try sandbox.client("bob")
        defer { bob.kill() }
        #expect(try await bob.waitFor("#general"))
        try bob.type("/join ops")
        try bob.press("Enter")
        // The banner lasts 4 s: it is looked for from before it can show, on a thread that a busy test task does not hold up.
        let banner = ada.watch(for: "bob (fatchat-bob): deploy done (in #ops)")
        try bob.type("deploy done")
        try bob.press("Enter")
        #expect(try await banner.seen(), "\(ada.screen)")
        let opsLine = try ada.capture().split(separator: "\n").first { $0.hasPrefix("#ops") }
        #expect(opsLine.map { $0.split(separator: "│").first?.trimmingCharacters(in: .whitespaces).hasSuffix("1") ?? false } == true,
                "the badge counts one unread: \(ada.screen)")
    }

    @Test func resizeRewrapsAndKeepsWorking() async throws {
        let sandbox = try await Sandbox()
        let ada = try sandbox.client("ada", width: 80, height: 24)
        defer { ada.kill() }
        #expect(try await ada.waitFor("#general"))
        let long = "the quick brown fox jumps over the lazy dog and keeps running far beyond the edge"
        try ada.type(long)
        try ada.press("Enter")
        #expect(try await ada.waitFor("<ada (fatchat-alice)> the quick brown fox"))
        try ada.resize(width: 40, height: 12)
        #expect(try await ada.waitFor("running far"), "\(ada.screen)")
        let narrow = try ada.capture().split(separator: "\n")
        #expect(narrow.count <= 12)
        #expect(narrow.allSatisfy { $0.count <= 40 })
        #expect(!narrow.contains { $0.contains("│") }, "the channel list hides when narrow")
        try ada.resize(width: 100, height: 30)
        #expect(try await ada.waitFor("#general        │"))
    }

    @Test func deletingTheChannelAnotherClientIsLookingAt() async throws {
        let sandbox = try await Sandbox()
        let ada = try sandbox.client("ada")
        defer { ada.kill() }
        #expect(try await ada.waitFor("#general"))
        try ada.type("/create doomed about to go")
        try ada.press("Enter")
        #expect(try await ada.waitFor("created #doomed"))

        let bob = try sandbox.client("bob")
        defer { bob.kill() }
        #expect(try await bob.waitFor("#general"))
        try bob.type("/join doomed")
        try bob.press("Enter")
        #expect(try await bob.waitFor("about to go"))

        try ada.type("/delete doomed")
        try ada.press("Enter")
        #expect(try await bob.waitFor("#doomed was deleted; you are now in #general"), "\(bob.screen)")
        #expect(try await bob.waitFor("[#general]"))
        #expect(!(try bob.capture().contains("#doomed        ")), "it left the channel list")
    }

    @Test func controlKeysReachTheClientAndQuitRestoresTheTerminal() async throws {
        let sandbox = try await Sandbox()
        let ada = try sandbox.client("ada")
        defer { ada.kill() }
        #expect(try await ada.waitFor("#general"))
        try ada.press("C-s")
        try ada.type("still alive")
        try ada.press("Enter")
        #expect(try await ada.waitFor("<ada (fatchat-alice)> still alive"), "Ctrl-S did not freeze the client")
        try ada.press("F1")
        #expect(try await ada.waitFor("Alt-1"), "F1 opens help")
        try ada.press("Escape")
        try ada.press("C-c")
        #expect(try await ada.waitForExit(), "Ctrl-C quits")
    }

    @Test(arguments: ["screen", "tmux", "linux"])
    func worksUnderOtherTerminalTypes(term: String) async throws {
        let sandbox = try await Sandbox()
        let ada = try sandbox.client("ada", term: term)
        defer { ada.kill() }
        #expect(try await ada.waitFor("[#general]"), "TERM=\(term): \(ada.screen)")
        try ada.type("works on \(term)")
        try ada.press("Enter")
        #expect(try await ada.waitFor("<ada (fatchat-alice)> works on \(term)"), "TERM=\(term): \(ada.screen)")
        try ada.press("C-c")
        #expect(try await ada.waitForExit())
    }

    /// A client left alone, nothing counting down on its screen, is woken every few seconds: it ticks once a
    /// second only while something is under way, so a hundred of them on one machine cost next to nothing.
    @Test func anIdleClientIsWokenEveryFewSecondsNotEverySecond() async throws {
        let sandbox = try await Sandbox()
        let ada = try sandbox.client("ada")
        defer { ada.kill() }
        #expect(try await ada.waitFor("#general"))
        let pid = try #require(ada.programID(), "the client's process")
        // Ten seconds without a key or a message before it may go quiet.
        try await Task.sleep(for: .seconds(12))
        let before = try #require(ThreadSwitches.mainThread(of: pid))
        try await Task.sleep(for: .seconds(10))
        let after = try #require(ThreadSwitches.mainThread(of: pid))
        #expect(after - before <= 5, "the main thread was woken \(after - before) times in 10 s")
        // Still awake to a key at once.
        try ada.type("still here")
        try ada.press("Enter")
        #expect(try await ada.waitFor("<ada (fatchat-alice)> still here"), "\(ada.screen)")
    }
}
