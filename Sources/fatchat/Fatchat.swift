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
            Exit codes: 0 success; 1 an error (the message says what); 3 the bot ended with \
            messages still queued; 64 bad command-line usage.
            """,
        subcommands: [Chat.self, Init.self, Post.self, Read.self, Channels.self, Who.self, Bot.self, Profile.self, Whois.self, Admin.self],
        defaultSubcommand: Chat.self)
}

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The container directory (default: $FATCHAT_CONTAINER, else ~/.local/share/fatchat).", valueName: "DIR"))
    var container: String?

    @Option(name: .long, help: ArgumentHelp("The handle to use for this run.", valueName: "NAME"))
    var handle: String?

    @Option(name: .long, help: ArgumentHelp("Override the filesystem detection: local or network.", valueName: "MODE"))
    var fsMode: String?

    /// The container directory these options name.
    var containerURL: URL {
        if let container { return URL(fileURLWithPath: container) }
        if let env = ProcessInfo.processInfo.environment["FATCHAT_CONTAINER"], !env.isEmpty { return URL(fileURLWithPath: env) }
        return Container.defaultURL
    }

    func openContainer(create: Bool = true, publicOnFirstUse: Bool = false) throws -> Container {
        var options = Container.Options(create: create)
        options.opensPublicDatabaseOnFirstUse = publicOnFirstUse
        if let fsMode {
            guard let mode = JournalMode(rawValue: fsMode) else {
                throw ValidationError("--fs-mode is 'local' or 'network', not '\(fsMode)'.")
            }
            options.mode = mode
        }
        return try Container(url: containerURL, options: options)
    }

    /// Opens the chat; `client` names where this command keeps its place in the change feed.
    func openClient(_ client: String, resume: Bool = true) throws -> ChatClient {
        var configuration = SyncEngine.Configuration()
        configuration.clientName = client
        configuration.resumeFromSavedToken = resume
        // A lock on the shared file then holds up only what needs it, not the queuing of a line.
        return try ChatClient(container: try openContainer(publicOnFirstUse: true), handle: handle, configuration: configuration)
    }
}

/// Turns the errors a person can act on into one line on stderr and exit code 1.
func reportingErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as StoreError {
        FileHandle.standardError.write(Data("fatchat: \(error.message)\n".utf8))
        throw ExitCode.failure
    } catch let error as CommandError {
        FileHandle.standardError.write(Data("fatchat: \(error.message)\n".utf8))
        throw ExitCode.failure
    }
}
