import Foundation
import ProcessTestKit
import Testing

/// Issue 14's direct messages between real OS users: sealed so that the shared file holds no
/// plaintext, read by the recipient, neither read nor listed by a third member, deleted by the sender.
@Suite(.startsProcesses, .serialized) struct DirectMessageTests {
    static let alice = "fcdmsgalice"
    static let bob = "fcdmsgbob"
    static let carol = "fcdmsgcarol"
    static let group = "fcdmsggroup"
    static let secret = "the vault code is swordfish-4711"

    private func bot(_ user: String, _ container: String, _ lines: [String]) async throws -> WorkerProcess {
        try await GroupContainer.bot(user, container, lines)
    }

    /// Every file under `directory`, read whole (the database, its WAL and journals, logs, keys, assets).
    private static func files(under directory: String) -> [(String, Data)] {
        guard let walk = FileManager.default.enumerator(atPath: directory) else { return [] }
        return walk.compactMap { name in
            guard let relative = name as? String, let data = FileManager.default.contents(atPath: directory + "/" + relative) else { return nil }
            return (relative, data)
        }
    }

    private static func events(_ process: WorkerProcess, type: String) -> [[String: Any]] {
        SharedContainerFixture.objects(process).filter { $0["type"] as? String == type }
    }

    /// The texts of the distinct direct messages a bot printed: a bot that starts reports what arrived while it
    /// was away, so a `query` may repeat a message it printed as an event.
    private static func texts(_ process: WorkerProcess) -> [String] {
        var seen: Set<String> = []
        return events(process, type: "dm").compactMap { event in
            guard let id = event["id"] as? String, seen.insert(id).inserted else { return nil }
            return event["text"] as? String
        }
    }

    @Test(.enabled(if: OSUsers.available, "needs root to create the OS users fcdmsgalice, fcdmsgbob and fcdmsgcarol"),
          arguments: ["sqlite", "log"])
    func aDirectMessageIsReadByItsRecipientOnly(engine: String) async throws {
        let (root, container) = try await GroupContainer.make(users: [Self.alice, Self.bob, Self.carol], group: Self.group,
                                                              arguments: ["--engine", engine])
        defer { try? FileManager.default.removeItem(at: root) }
        for user in [Self.alice, Self.bob, Self.carol] {
            try? FileManager.default.removeItem(atPath: "/home/\(user)/.local/share/fatchat/known_keys")
        }
        // bob and carol run once, which publishes their keys; then both keep a bot running.
        for user in [Self.bob, Self.carol] { _ = try await bot(user, container, ["{\"cmd\":\"join\",\"channel\":\"general\"}"]) }
        let (bobBot, bobInput) = try SharedContainerFixture.runningBot(Self.bob, ["--json", "--container", container])
        let (carolBot, carolInput) = try SharedContainerFixture.runningBot(Self.carol, ["--json", "--container", container])
        defer { bobBot.killIfRunning(); carolBot.killIfRunning() }
        try await Task.sleep(for: .seconds(1))

        let sent = try await bot(Self.alice, container, ["{\"cmd\":\"msg\",\"to\":\"\(Self.bob)\",\"text\":\"\(Self.secret)\"}"])
        #expect(sent.errorText.isEmpty && Self.events(sent, type: "error").isEmpty, "\(sent.lines) \(sent.errorText)")

        #expect(await bobBot.waitForLines(1, timeout: .seconds(20)), "bob's bot saw nothing: \(bobBot.errorText)")
        let live = Self.events(bobBot, type: "dm")
        #expect(live.first?["text"] as? String == Self.secret, "\(bobBot.lines)")
        #expect((live.first?["user"] as? String)?.hasSuffix("_\(Self.alice)") == true, "\(live)")
        #expect(live.first?["verified"] == nil, "signed by alice: \(live)")

        // The shared files hold who wrote to whom, never the text.
        let leaked = Self.files(under: container).filter { $0.1.range(of: Data("swordfish".utf8)) != nil }.map(\.0)
        #expect(leaked.isEmpty, "plaintext in \(leaked)")
        #expect(!Self.files(under: container).isEmpty)

        let bobReads = try await bot(Self.bob, container, ["{\"cmd\":\"query\",\"with\":\"\(Self.alice)\"}"])
        #expect(Self.texts(bobReads) == [Self.secret], "\(bobReads.lines) \(bobReads.errorText)")
        let aliceReads = try await bot(Self.alice, container, ["{\"cmd\":\"query\",\"with\":\"\(Self.bob)\"}"])
        #expect(Self.texts(aliceReads) == [Self.secret], "the sender reads her own copy: \(aliceReads.lines)")

        // carol's bot got no event and her queries list nothing.
        try await Task.sleep(for: .seconds(1))
        #expect(Self.events(carolBot, type: "dm").isEmpty, "\(carolBot.lines)")
        #expect(!carolBot.lines.contains { $0.contains("swordfish") })
        for peer in [Self.alice, Self.bob] {
            let carolReads = try await bot(Self.carol, container, ["{\"cmd\":\"query\",\"with\":\"\(peer)\"}"])
            #expect(Self.events(carolReads, type: "dm").isEmpty, "\(carolReads.lines)")
            #expect(!carolReads.lines.contains { $0.contains("swordfish") })
        }

        // alice deletes it, as she would a channel message.
        let id = try #require(live.first?["id"] as? String)
        let deleted = try await bot(Self.alice, container, ["{\"cmd\":\"del\",\"id\":\"\(id.prefix(8))\"}"])
        #expect(Self.events(deleted, type: "error").isEmpty, "\(deleted.lines)")
        let afterDelete = try await bot(Self.bob, container, ["{\"cmd\":\"query\",\"with\":\"\(Self.alice)\"}"])
        #expect(Self.events(afterDelete, type: "dm").isEmpty, "\(afterDelete.lines)")
        try bobInput.fileHandleForWriting.close()
        try carolInput.fileHandleForWriting.close()
    }
}
