import Foundation
import ProcessTestKit
import Testing

/// Replies, reactions, the unread line and multi-line drafts as two real clients of two OS users draw them in tmux.
@Suite(.startsProcesses, .serialized, .enabled(if: TmuxSession.available && OSUsers.available, "needs tmux, and root to create OS users"))
struct RepliesReactionsTmuxTests {
    /// The short ID of the newest message of #general whose text is `text`, read with `fatchat read --json`.
    private func id(of text: String, in sandbox: ClientTmuxTests.Sandbox) async throws -> String {
        let read = try WorkerProcess("read", executable: "fatchat", ["read", "--container", sandbox.container, "general", "--json"],
                                     environment: ["XDG_DATA_HOME": sandbox.root.appendingPathComponent("reader").path])
        _ = try await read.finish(timeout: .seconds(60))
        let objects = read.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let id = objects.last { $0["text"] as? String == text }?["id"] as? String
        return String(try #require(id, "\(read.lines) \(read.errorText)").prefix(6))
    }

    /// Ada's and Bob's clients, each showing #general.
    private func clients(in sandbox: ClientTmuxTests.Sandbox) async throws -> (TmuxSession, TmuxSession) {
        let ada = try sandbox.client("ada")
        #expect(try await ada.waitFor("#general"))
        let bob: TmuxSession
        do { bob = try sandbox.client("bob") } catch { ada.kill(); throw error }
        #expect(try await bob.waitFor("#general"))
        return (ada, bob)
    }

    private func send(_ line: String, in client: TmuxSession) throws {
        try client.type(line)
        try client.press("Enter")
    }

    @Test func aReplyIsQuotedAndReactionsAreCounted() async throws {
        let sandbox = try await ClientTmuxTests.Sandbox()
        let (ada, bob) = try await clients(in: sandbox)
        defer { ada.kill(); bob.kill() }

        try send("is the build green?", in: ada)
        #expect(try await bob.waitFor("<ada (fatchat-alice)> is the build green?"), "\(bob.screen)")
        let id = try await id(of: "is the build green?", in: sandbox)

        try send("/reply \(id) yes, all green", in: bob)
        #expect(try await ada.waitFor("↳ <ada (fatchat-alice)> is the build green?"), "\(ada.screen)")
        #expect(try await ada.waitFor("<bob (fatchat-bob)> yes, all green"), "\(ada.screen)")

        try send("/react \(id) 👍", in: bob)
        try send("/react \(id) 👍", in: ada)
        try send("/react \(id) 👍", in: ada)
        #expect(try await ada.waitFor("is the build green?  👍 2"), "\(ada.screen)")
        #expect(try await bob.waitFor("is the build green?  👍 2"), "\(bob.screen)")
        // The quote line is not the message: only one line carries the counts.
        #expect(try bob.capture().components(separatedBy: "👍").count == 2, "\(bob.screen)")

        try send("/reactions \(id)", in: bob)
        #expect(try await bob.waitFor("reactions on \(id): 👍 "), "\(bob.screen)")
    }

    @Test func theUnreadLineSitsWhereILeftOffAndAltEnterMakesTwoLines() async throws {
        let sandbox = try await ClientTmuxTests.Sandbox()
        let (ada, bob) = try await clients(in: sandbox)
        defer { ada.kill(); bob.kill() }
        try send("before you left", in: bob)
        #expect(try await ada.waitFor("before you left"))

        try send("/join ops", in: ada)
        #expect(try await ada.waitFor("joined it"), "\(ada.screen)")
        try bob.type("first line")
        try bob.press("M-Enter")
        try bob.type("second line")
        #expect(try await bob.waitFor("second line"))
        try bob.press("Enter")
        #expect(try await bob.waitFor("<bob (fatchat-bob)> first line"))
        // bob's line shows before it is written. ada's list counting it unread says it was, and reached her:
        // /join then loads it below the marker, not as a live line that gets none.
        #expect(try await ada.waitFor("#general       1│"), "\(ada.screen)")

        try send("/join general", in: ada)
        #expect(try await ada.waitFor("<bob (fatchat-bob)> first line"), "\(ada.screen)")
        let lines = try ada.capture().split(separator: "\n").map(String.init)
        let marker = try #require(lines.firstIndex { $0.contains("─ new messages ─") }, "\(ada.screen)")
        #expect(lines[marker + 1].contains("<bob (fatchat-bob)> first line"), "\(ada.screen)")
        #expect(lines[marker + 2].contains("second line"), "\(ada.screen)")
        #expect(lines[..<marker].contains { $0.contains("before you left") }, "\(ada.screen)")
    }
}
