import Foundation

/// What the program that opens a container is called: where its private data goes, and what its errors tell a person to run.
///
/// RecordStore is a library of its own, so it names no program: the program
/// passes its names and commands in through `Container.Options.naming`. The
/// defaults name RecordStore and its API, so a message reads right either way.
public struct ContainerNaming: Sendable, Equatable {
    /// The program's name in messages, such as "Fatchat".
    public var programName: String
    /// The directory under `$XDG_DATA_HOME` that holds private databases and the default container.
    public var dataDirectoryName: String
    /// The command that makes a container in the directory that follows it, such as `fatchat init`; nil names the API.
    public var createCommand: String?
    /// The command-line option that chooses a journal mode, such as `--fs-mode`; nil names `Container.Options.mode`.
    public var journalModeOption: String?
    /// The command that lists damaged rows and foreign schema objects, such as `fatchat admin check`; nil names the API.
    public var checkCommand: String?
    /// The command that turns a single-file container into logs, such as `fatchat admin migrate-to-logs`; nil: none is named.
    public var migrateCommand: String?

    /// Names for a program; the defaults name RecordStore itself.
    public init(programName: String = "RecordStore", dataDirectoryName: String = "recordstore",
                createCommand: String? = nil, journalModeOption: String? = nil, checkCommand: String? = nil,
                migrateCommand: String? = nil) {
        self.programName = programName
        self.dataDirectoryName = dataDirectoryName
        self.createCommand = createCommand
        self.journalModeOption = journalModeOption
        self.checkCommand = checkCommand
        self.migrateCommand = migrateCommand
    }

    /// How to list a container's damaged rows, as code to quote: the command, or the API call.
    func checking() -> String {
        guard let checkCommand else { return "`RecordDatabase.checkIntegrity()`" }
        return "`\(checkCommand)`"
    }

    /// How to make a container, as code to quote: the command (with `path` when given), or the API call.
    func creating(_ path: String? = nil) -> String {
        guard let createCommand else { return "`Container.create(at:access:)`" }
        return "`" + [createCommand, path].compactMap { $0 }.joined(separator: " ") + "`"
    }

    /// How to ask for journal mode `mode` when opening a container: the option with its value, or the API's setting.
    func choosing(_ mode: JournalMode) -> String {
        guard let journalModeOption else { return "Container.Options.mode = .\(mode.rawValue)" }
        return "\(journalModeOption) \(mode.rawValue)"
    }
}
