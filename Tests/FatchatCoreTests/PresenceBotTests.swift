import Foundation
import ProcessTestKit
import Testing

/// Presence and typing between two real OS users' bots, on both engines: what one says reaches the other's
/// JSON output, `/who` shows it, and an exiting bot reads as offline.
@Suite(.startsProcesses, .serialized, .enabled(if: OSUsers.available, "needs root, to make OS users"))
struct PresenceBotTests {
    static let alice = "fatchat-test-pra"
    static let bob = "fatchat-test-prb"
    static let group = "fatchat-test-pr"

    @Test(arguments: ["sqlite", "log"])
    func typingAndPresenceReachAnotherUsersBot(engine: String) async throws {
        let (root, container) = try await GroupContainer.make(users: [Self.alice, Self.bob], group: Self.group, arguments: ["--engine", engine])
        defer { try? FileManager.default.removeItem(at: root) }
        let (watcher, watcherInput) = try SharedContainerFixture.runningBot(Self.alice, ["--container", container, "--json", "--join", "general"])
        defer { watcher.killIfRunning() }
        #expect(await watcher.waitForLines(1, timeout: .seconds(60)), "alice's bot joined: \(watcher.errorText)")

        let (talker, talkerInput) = try SharedContainerFixture.runningBot(Self.bob, ["--container", container, "--json", "--join", "general"])
        defer { talker.killIfRunning() }
        #expect(await talker.waitForLines(1, timeout: .seconds(60)), "bob's bot joined: \(talker.errorText)")
        talkerInput.fileHandleForWriting.write(Data(#"{"cmd":"typing"}"# .utf8 + [10]))
        talkerInput.fileHandleForWriting.write(Data(#"{"cmd":"away","reason":"at lunch; back at 2"}"#.utf8 + [10]))

        let typing = await SharedContainerFixture.object(in: watcher, timeout: 60) { $0["type"] as? String == "typing" }
        #expect(typing?["channel"] as? String == "general", "\(watcher.lines)")
        #expect((typing?["user"] as? String)?.hasSuffix("_\(Self.bob)") == true)
        let away = await SharedContainerFixture.object(in: watcher, timeout: 60) { $0["type"] as? String == "presence" && $0["state"] as? String == "away" }
        #expect(away?["reason"] as? String == "at lunch; back at 2", "\(watcher.lines)")

        // /who in alice's bot shows bob away with his reason, and herself online.
        watcherInput.fileHandleForWriting.write(Data(#"{"cmd":"who"}"#.utf8 + [10]))
        let who = await SharedContainerFixture.object(in: watcher, timeout: 30) { $0["type"] as? String == "members" }
        let members = (who?["members"] as? [[String: Any]]) ?? []
        let bobEntry = members.first { ($0["user"] as? String)?.hasSuffix("_\(Self.bob)") == true }
        let aliceEntry = members.first { ($0["user"] as? String)?.hasSuffix("_\(Self.alice)") == true }
        #expect(bobEntry?["presence"] as? String == "away" && bobEntry?["reason"] as? String == "at lunch; back at 2", "\(members)")
        #expect(aliceEntry?["presence"] as? String == "online", "\(members)")
        #expect(aliceEntry?["last_seen"] is String)

        // Neither typing nor presence is a message in the channel's history.
        let read = try await SharedContainerFixture.fatchat(Self.alice, ["read", "--container", container, "general", "--json"])
        #expect(SharedContainerFixture.objects(read).isEmpty, "\(read.lines)")

        // Bob's bot ends: it says offline on its way out, and alice's bot hears it.
        try talkerInput.fileHandleForWriting.close()
        _ = try await talker.finish(timeout: .seconds(60))
        let offline = await SharedContainerFixture.object(in: watcher, timeout: 60) { $0["type"] as? String == "presence" && $0["state"] as? String == "offline" }
        #expect(offline != nil, "\(watcher.lines)")
        let plainWho = try await SharedContainerFixture.fatchat(Self.alice, ["who", "--container", container, "general"])
        #expect(plainWho.lines.contains { $0.hasPrefix(Self.bob) && $0.contains("[offline, last seen ") }, "\(plainWho.lines)")
        try watcherInput.fileHandleForWriting.close()
        _ = try await watcher.finish(timeout: .seconds(60))
    }
}
