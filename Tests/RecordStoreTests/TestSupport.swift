import Foundation
@testable import RecordStore

/// A temporary directory that removes itself when the test is done with it.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("fatchat-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ component: String) -> URL { url.appendingPathComponent(component) }

    /// Opens (creating if needed) a container in `name`, with its private data inside this directory too.
    func container(_ name: String = "container", mode: JournalMode? = nil, historyLimit: Int? = nil) throws -> Container {
        var options = Container.Options(mode: mode, privateDataDirectory: path("private-data"))
        if let historyLimit { options.changeHistoryLimit = historyLimit }
        return try Container(url: path(name), options: options)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
