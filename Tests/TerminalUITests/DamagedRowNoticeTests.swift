import Foundation
import ProcessTestKit
import SyncEngine
import Testing
@testable import FatchatCore
@testable import RecordStore
@testable import TerminalUI

/// A row of the shared file that does not decode is skipped; the full-screen client, whose
/// standard error is the screen, says so once, as a notice that comes through the engine's events.
@Suite(.startsProcesses) struct DamagedRowNoticeTests {
    /// The client's notices that name `recordName`.
    private func notices(naming recordName: String, in screen: ChatScreen) -> [String] {
        screen.state.messages.filter { $0.isNotice && $0.text.contains(recordName) }.map(\.text)
    }

    /// Hands the screen what the engine has queued, as the client's loop does when its descriptor is readable.
    private func deliver(_ client: ChatClient, to screen: ChatScreen) {
        client.drainEvents().forEach(screen.handle)
    }

    @Test func aDamagedRowShowsOnceAsANoticeThroughTheEngineEvents() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let client = try sandbox.client()
        let screen = try ChatScreen(client: client, width: 120, height: 24, renderOptions: RenderOptions(usesColor: false))
        for character in "soon damaged" { screen.handle(.key(.character(character))) }
        screen.handle(.key(.enter))
        let name = try #require(screen.state.messages.last?.id)
        client.start(reportingDamagedRows: true)
        defer { client.stop() }
        #expect(client.waitUntilSent(timeout: 10))
        deliver(client, to: screen)

        // Someone in the group gives the message a `created` that is text, straight into the file.
        try SQLiteCLI.run(client.container.url.appendingPathComponent("public.sqlite").path,
                          "UPDATE record SET created = 'yesterday' WHERE name = '\(name)'")
        screen.handle(.reload)
        #expect(!screen.state.messages.contains { $0.text == "soon damaged" }, "the row is skipped")
        #expect(notices(naming: name, in: screen).isEmpty, "the reader's thread never touches the screen itself")

        deliver(client, to: screen)
        let shown = notices(naming: name, in: screen)
        #expect(shown.count == 1, "\(screen.state.messages.map(\.text))")
        #expect(shown.first?.hasPrefix("skipped the record row") == true && shown.first?.contains("admin check") == true, "\(shown)")
        let frame = screen.render().lines
        #expect(frame.contains { $0.contains("<*> skipped the record row") }, "\(frame)")

        // Read again: the row is still skipped, and not reported again.
        screen.handle(.reload)
        deliver(client, to: screen)
        #expect(notices(naming: name, in: screen).isEmpty, "\(screen.state.messages.map(\.text))")

        // A client that takes over the terminal later is told of the rows skipped before it did.
        let later = try sandbox.client("later")
        later.engine.reportDamagedRows()
        var replayed: [String] = []
        while let event = later.engine.nextEvent() {
            if case .damagedRowSkipped(let line) = event, line.contains(name) { replayed.append(line) }
        }
        #expect(replayed.count == 1, "\(replayed)")
    }

    @Test func rowsSkippedWhileTheFileOpensReachTheChatOnceShown() throws {
        let sandbox = ChatScreenTests.Sandbox()
        var opening = Opening(client: try sandbox.client())
        opening.note(.damagedRowSkipped("skipped the record row a: created holds text, not a date."))
        opening.note(.status(ChatStatus(online: true, pending: 0, failed: 0)))
        opening.note(.damagedRowSkipped("skipped the record row b: created holds text, not a date."))
        opening.note(.reload)
        let kept = opening.events.map { event -> String in
            switch event {
            case .damagedRowSkipped(let line): line
            case .status: "status"
            default: "other"
            }
        }
        #expect(kept == ["skipped the record row a: created holds text, not a date.",
                         "skipped the record row b: created holds text, not a date.", "status"])
        // The opening thread is done before the sandbox goes (a hang guard, not a timing assertion).
        for _ in 0..<100 where !opening.isOpen { opening.waitBriefly() }
    }

    @Test func theNoticeIsInert() {
        let line = DamagedRow(table: "record", key: "_defaultZone/evil\u{1B}[2J", problem: "created is text: \u{1B}]0;pwned\u{07}").description
        var state = ClientViewState()
        state.messages = [MessageItem(id: "notice:1", time: Date(timeIntervalSince1970: 0), handle: "*", userID: "", text: line, isNotice: true)]
        let frame = ClientRenderer.render(state, editor: LineEditor(), width: 120, height: 12, options: RenderOptions(usesColor: false)).lines
        #expect(frame.contains { $0.contains("evil\\u{1b}[2J") }, "\(frame)")
        #expect(!frame.joined().unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
    }

    // MARK: In a terminal

    static let alice = "fcdmgalice"
    static let bob = "fcdmgbob"
    static let group = "fcdmggroup"

    @Test(.enabled(if: TmuxSession.available && OSUsers.available && FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"),
                   "needs tmux, sqlite3 and root to create the OS users fcdmgalice and fcdmgbob"))
    func aRowDamagedWhileTheClientRunsIsShownInIt() async throws {
        let (root, container) = try await GroupContainer.make(users: [Self.alice, Self.bob], group: Self.group)
        defer { try? FileManager.default.removeItem(at: root) }

        let binary = try WorkerProcess.executable("fatchat").path
        let client = try TmuxSession(name: "fatchat-damaged-\(UUID().uuidString.prefix(6))", width: 100, height: 30,
                                     command: OSUsers.launcher(for: Self.alice) + ["TERM=xterm-256color", binary, "--container", container])
        defer { client.kill() }
        #expect(try await client.waitFor("online"), "\(client.screen)")
        try client.type("soon damaged")
        try client.press("Enter")
        #expect(try await client.waitFor("soon damaged"), "\(client.screen)")
        // On screen at once, in the shared file once sent: wait (a hang guard, not a timing assertion) until `read` finds it.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let read = try WorkerProcess("read", executable: "fatchat", ["read", "--container", container, "general"],
                                         launcher: OSUsers.launcher(for: Self.bob))
            _ = try await read.finish(timeout: .seconds(60))
            if read.lines.contains(where: { $0.hasSuffix("soon damaged") }) { break }
            try await Task.sleep(for: .milliseconds(100))
        }

        // Bob, in the group, gives alice's message a text `created` behind Fatchat's back; she opens the channel again.
        try SQLiteCLI.run(container + "/public.sqlite",
                          "UPDATE record SET created = 'yesterday' WHERE type = 'Message' AND fields LIKE '%soon damaged%'",
                          launcher: OSUsers.launcher(for: Self.bob))
        for line in ["/join ops", "/join general"] {
            try client.type(line)
            try client.press("Enter")
        }
        #expect(try await client.waitFor("skipped the record row"), "\(client.screen)")
        let screen = try client.capture()
        #expect(screen.contains("created holds text"), "\(screen)")
        #expect(!screen.contains("EXITED"), "the client keeps running: \(screen)")
    }
}
