import Foundation
@testable import FatchatCore
import RecordStore
import SyncEngine

/// A temporary container, with one private data directory per pretend user.
final class ChatSandbox {
    let root: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("fatchat-chat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// A chat client on the shared container; its engine runs, so that sends go out, and looks
    /// without being woken every `pollInterval` seconds.
    func client(_ name: String = "me", handle: String? = nil, pollInterval: Double = 0.1) throws -> ChatClient {
        let container = try Container(url: root.appendingPathComponent("container"),
                                      options: Container.Options(privateDataDirectory: root.appendingPathComponent("private-\(name)")))
        var configuration = SyncEngine.Configuration()
        configuration.clientName = "test"
        configuration.pollInterval = pollInterval
        configuration.maximumBackoff = 0.2
        let client = try ChatClient(container: container, handle: handle, configuration: configuration)
        client.engine.start()
        return client
    }
}

extension ChatClient {
    /// Waits until the outbox has nothing pending.
    func flush() { _ = engine.waitUntilSent(timeout: 10) }
}
