import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore

/// The engines a parameterized RecordStore test runs on: `sqlite` always, `postgresql` where a throwaway server can run.
enum TestEngine: String, Sendable, CustomTestStringConvertible {
    case sqlite, postgresql

    /// Every engine this machine can test; CI always has PostgreSQL (.ci/run installs it).
    static var available: [TestEngine] { PostgresCluster.shouldRun ? [.sqlite, .postgresql] : [.sqlite] }

    var testDescription: String { rawValue }
}

extension TemporaryDirectory {
    /// A new container on `engine`: for `postgresql`, in a fresh database of the process's shared cluster, owned by root's role.
    func container(_ name: String = "container", engine: TestEngine, historyLimit: Int? = nil) throws -> Container {
        guard engine == .postgresql else { return try container(name, mode: .local, historyLimit: historyLimit) }
        var options = Container.Options(privateDataDirectory: path("private-data"))
        if let historyLimit { options.changeHistoryLimit = historyLimit }
        // Opened again, as a process that restarts would.
        if FileManager.default.fileExists(atPath: path(name).appendingPathComponent("container.json").path) {
            options.create = false
            return try Container(url: path(name), options: options)
        }
        options.engine = .postgresql
        options.postgresURL = try PostgresCluster.shared().makeDatabase()
        return try Container.create(at: path(name), access: .umask, options: options)
    }
}
