import Foundation
import RecordStore

/// A fresh container for one benchmark configuration: a single file in `mode`, or, given a URL,
/// a folder whose public database is that PostgreSQL database, emptied first so that no count
/// includes an earlier configuration's messages.
enum BenchContainer {
    static func make(at url: URL, privateData: URL, mode: JournalMode? = nil, postgresURL: String?) throws -> Container {
        var options = Container.Options(mode: mode, privateDataDirectory: privateData, naming: .fatchat)
        guard let postgresURL else { return try Container(url: url, options: options) }
        options.engine = .postgresql
        options.postgresURL = postgresURL
        let container = try Container.create(at: url, access: .umask, options: options)
        try container.publicDatabase.eraseAll()
        return container
    }
}
