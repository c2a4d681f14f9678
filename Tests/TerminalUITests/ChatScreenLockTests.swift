import Foundation
import ProcessTestKit
import Testing
@testable import FatchatCore
@testable import RecordStore
import SyncEngine
@testable import TerminalUI

/// The client's controller on a network-mode container whose file another process holds locked, headless.
@Suite(.startsProcesses, .serialized, .enabled(if: HeldLock.available, "needs the sqlite3 command"))
struct ChatScreenLockTests {
    @Test func aChannelTheLockHoldsUpIsShownOnATickOnceTheLockIsGone() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("fatchat-screenlock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let container = try Container(url: root.appendingPathComponent("chat"),
                                      options: Container.Options(mode: .network, privateDataDirectory: root.appendingPathComponent("data")))
        let client = try ChatClient(container: container, handle: "ada")
        let ops = try ChannelName("ops")
        let general = try ChannelName("general")
        client.start()
        try client.join(general)
        try client.join(ops)
        try client.post("ops line", to: ops)
        #expect(client.waitUntilSent(timeout: 30))
        client.stop()
        let screen = try ChatClient.withoutWaitingForLocks {
            try ChatScreen(client: client, width: 80, height: 24, renderOptions: RenderOptions(usesColor: false))
        }
        ChatClient.withoutWaitingForLocks { screen.select(general) }
        #expect(screen.session.current == general)
        #expect(screen.state.messages.isEmpty)

        let lock = try await HeldLock(path: root.appendingPathComponent("chat/public.sqlite").path, vfs: "unix-dotfile")
        ChatClient.withoutWaitingForLocks { screen.select(ops) }
        #expect(screen.session.current == ops, "what is typed now goes to #ops")
        #expect(screen.state.status.syncState == "waiting for the database: locked")
        #expect(screen.state.messages.map(\.text) == ["#ops is shown once the database is free: another process holds it locked"])
        _ = ChatClient.withoutWaitingForLocks { screen.tick() }
        #expect(screen.state.messages.count == 1, "a failed retry adds no second notice")

        lock.release()
        _ = ChatClient.withoutWaitingForLocks { screen.tick() }
        #expect(screen.state.messages.map(\.text) == ["ops line"])
        #expect(screen.state.status.syncState != "waiting for the database: locked")
    }
}
