import ArgumentParser
import Foundation
import RecordStore

/// Which container to open, and how.
struct ContainerOptions: ParsableArguments {
    @Option(name: .long, help: "The container directory.")
    var container: String

    @Option(name: .long, help: "local, network, or auto (detect from the filesystem).")
    var mode: ModeChoice = .auto

    @Option(name: .long, help: "Where private databases go (default: $XDG_DATA_HOME/fatchat).")
    var privateDir: String?

    @Option(name: .long, help: "public or private.")
    var database: DatabaseChoice = .public

    /// The worker stands in for Fatchat's processes in tests, so its private databases go where Fatchat's do.
    static let naming = ContainerNaming(programName: "Fatchat", dataDirectoryName: "fatchat")

    @Option(name: .long, help: "sqlite or log: the engine a new container gets, and the one an existing container must have.")
    var engine: StorageEngine?

    @Flag(name: .long, help: "Print a line on stdout for each step of a long catch-up from a log container's logs.")
    var catchUpProgress = false

    /// Opens the container and picks the database.
    func open() throws -> (Container, RecordDatabase) {
        var options = Container.Options(mode: mode.journalMode, naming: Self.naming)
        options.privateDataDirectory = privateDir.map { URL(fileURLWithPath: $0, isDirectory: true) }
        options.engine = engine
        let container = try Container(url: URL(fileURLWithPath: container, isDirectory: true), options: options)
        // A log container's cache catches up with every log before the worker looks at it.
        if catchUpProgress {
            try container.refreshPublicDatabase { progress in
                WorkerOutput.line(progress.description)
            }
        } else {
            try container.refreshPublicDatabase()
        }
        switch database {
        case .public: return (container, container.publicDatabase)
        case .private: return (container, container.privateDatabase)
        }
    }
}

/// `--mode`: a journal mode, or detection.
enum ModeChoice: String, ExpressibleByArgument, CaseIterable {
    case local, network, auto

    var journalMode: JournalMode? {
        switch self {
        case .local: .local
        case .network: .network
        case .auto: nil
        }
    }
}

extension StorageEngine: ExpressibleByArgument {}

/// `--database`.
enum DatabaseChoice: String, ExpressibleByArgument, CaseIterable {
    case `public`, `private`
}
