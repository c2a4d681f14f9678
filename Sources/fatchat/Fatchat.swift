import ArgumentParser
import FatchatCore
import Foundation
import RecordStore
import SyncEngine

/// `fatchat`: the command line. Each subcommand parses its arguments and calls FatchatCore.
@main
struct Fatchat: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fatchat",
        abstract: "A terminal chat for people who share a machine or a network filesystem.",
        discussion: """
            With no subcommand, fatchat opens the full-screen client on the container.
            Exit codes: 0 success; 1 an error (the message says what); 2 doctor found something to fix; 3 the bot ended with \
            messages still queued; 64 bad command-line usage.
            """,
        version: FatchatVersion.string,
        subcommands: [Chat.self, Init.self, Post.self, Read.self, Channels.self, Who.self, Bot.self, Profile.self, Whois.self, Doctor.self,
                      ConfigCommand.self, Admin.self, ManualSections.self],
        defaultSubcommand: Chat.self)

    static func main() {
        ProcessMemory.useOneArena()
        main(nil)
    }
}

/// `fatchat manual-sections`, hidden: the manual page's chat commands and keys, which `scripts/manual.sh` adds
/// to the page that swift-argument-parser generates from these definitions.
struct ManualSections: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "manual-sections", shouldDisplay: false)

    func run() {
        print(Help.manualSections(), terminator: "")
    }
}

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The container directory (default: $FATCHAT_CONTAINER, else ~/.local/share/fatchat).", valueName: "DIR"))
    var container: String?

    @Option(name: .long, help: ArgumentHelp("The handle to use for this run.", valueName: "NAME"))
    var handle: String?

    @Option(name: .long, help: ArgumentHelp("Override the filesystem detection: local or network.", valueName: "MODE"))
    var fsMode: String?

    @Option(help: ArgumentHelp("The configuration file (default: $XDG_CONFIG_HOME/fatchat/config.yaml, else ~/.config/fatchat/config.yaml).",
                               valueName: "FILE"))
    var config: String?

    /// The settings of this run: these options over the configuration file.
    func settings() throws -> Settings {
        try Settings.resolve(global: self)
    }

    /// The container directory these options and the configuration file name.
    func containerURL() throws -> URL {
        try settings().container.value
    }

    /// Opens the container; only the embedded default in the user's own data directory is made on first use.
    ///
    /// Any other directory is made by `fatchat init`, once, so that a
    /// container whose descriptor has gone is never silently made anew.
    /// `publicOnFirstUse` leaves the shared file closed until something needs it, so a lock on it holds up nothing before then.
    /// `catchUp: false` skips a log container's first reading of the logs, for work that must not take long.
    func openContainer(create: Bool = true, publicOnFirstUse: Bool = false, catchUp: Bool = true, settings: Settings? = nil) throws -> Container {
        // Every command opens its container here first, before any row is read, so this is where the process says how its damaged rows are reported.
        DamagedRowLog.word(as: .fatchat)
        let settings = try settings ?? self.settings()
        var options = Container.Options(create: create && !settings.containerIsNamed, naming: .fatchat)
        options.opensPublicDatabaseOnFirstUse = publicOnFirstUse
        options.refusesSingleFileOnNetwork = true
        if let fsMode {
            guard let mode = JournalMode(rawValue: fsMode) else {
                throw ValidationError("--fs-mode is 'local' or 'network', not '\(fsMode)'.")
            }
            options.mode = mode
        }
        let opened = try Container(url: settings.container.value, options: options)
        // A log container's first poll may be long; a poll that fails here fails again, and is reported, where the command reads.
        if catchUp { try? CatchUpBar.catchUp(opened) }
        return opened
    }

    /// Opens the chat; `client` names where this command keeps its place in the change feed.
    func openClient(_ client: String, resume: Bool = true, settings: Settings? = nil) throws -> ChatClient {
        let settings = try settings ?? self.settings()
        var configuration = SyncEngine.Configuration()
        configuration.clientName = client
        configuration.resumeFromSavedToken = resume
        // A lock on the shared file then holds up only what needs it, not the queuing of a line.
        return try ChatClient(container: try openContainer(publicOnFirstUse: true, settings: settings), handle: settings.handle.value,
                              highlights: settings.highlight.value, configuration: configuration)
    }
}

/// A subcommand whose errors reach the person as one inert line on stderr and exit code 1.
///
/// It implements ``execute()``; the `run()` ArgumentParser calls wraps it. An error's text
/// can quote the shared file (a trigger's `RAISE` message, a record name), so it goes out
/// through ``Output/error(_:)``, never raw through ArgumentParser. Usage errors, `ExitCode`
/// and `CleanExit` pass through unchanged, so their exit codes stay as documented.
protocol ReportingCommand: ParsableCommand {
    /// The subcommand's work; what it throws is reported by `run()`.
    func execute() throws
}

extension ReportingCommand {
    func run() throws {
        do {
            try execute()
            return
        } catch let error as ExitCode {
            throw error
        } catch let error as ValidationError {
            throw error
        } catch let error as CleanExit {
            throw error
        } catch let error as StoreError {
            Output.error(error.message)
        } catch let error as CommandError {
            Output.error(error.message)
        } catch {
            Output.error(String(describing: error))
        }
        throw ExitCode.failure
    }
}
