import Foundation
import Testing
@testable import RecordStore
@testable import SyncEngine

/// The sync engine on a `log` container: its change signal polls the logs, so another client's save arrives as an event.
@Suite struct LogSyncTests {
    func open(_ dir: TemporaryDirectory, user: String) throws -> Container {
        var options = Container.Options(privateDataDirectory: dir.path("private-\(user)"))
        options.engine = .log
        return try Container(url: dir.path("container"), options: options)
    }

    @Test func anotherClientsSaveAndDeleteArriveThroughThePoll() throws {
        let dir = try TemporaryDirectory()
        var configuration = SyncEngine.Configuration.testing()
        configuration.pollInterval = nil
        let engine = try SyncEngine(container: try open(dir, user: "reader"), configuration: configuration)
        #expect(engine.pollInterval == 0.25)
        engine.start()
        defer { engine.stop() }
        var collector = EventCollector(engine: engine)
        _ = collector.collect(timeout: 0.3) { _ in false }

        let arrived = try saveAndDeleteArrive("from-the-log", from: try open(dir, user: "writer"), at: &collector)
        #expect(arrived.saved)
        #expect(arrived.deleted)
    }
}
