import ArgumentParser
import Foundation
import RecordStore
import SyncEngine

/// A sync engine in a process of its own, for the multi-process tests and for trying things by hand.
@main
struct SyncWorker: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-worker",
        abstract: "Sends or receives records through a SyncEngine, one line of output per record.",
        subcommands: [Send.self, Receive.self])
}

struct ContainerOptions: ParsableArguments {
    @Option(help: "The container directory.")
    var container: String

    @Option(help: "Where this process keeps its private database (stands for one OS user).")
    var privateData: String

    @Option(help: "local or network; detected from the filesystem when omitted.")
    var mode: String?

    @Option(help: "Poll interval in seconds.")
    var poll: Double?

    func open() throws -> Container {
        var options = Container.Options(privateDataDirectory: URL(fileURLWithPath: privateData))
        if let mode {
            guard let parsed = JournalMode(rawValue: mode) else { throw ValidationError("--mode is local or network") }
            options.mode = parsed
        }
        return try Container(url: URL(fileURLWithPath: container), options: options)
    }

    func configuration(client: String) -> SyncEngine.Configuration {
        var configuration = SyncEngine.Configuration()
        configuration.clientName = client
        configuration.pollInterval = poll
        configuration.maximumBackoff = 0.5
        return configuration
    }
}

/// Prints a line and flushes at once, so a parent reading the pipe sees it even if this process is killed next.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

struct Send: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Queues COUNT messages named PREFIX-i, one per outbox commit, then waits until they are sent.")

    @OptionGroup var store: ContainerOptions
    @Option var count = 0
    @Option var prefix = "m"
    @Option(help: "Skip the first FROM messages (they were queued by an earlier run).")
    var from = 0
    @Option(help: "Seconds to wait for the outbox to empty.")
    var drainTimeout = 120.0

    func run() throws {
        let engine = try SyncEngine(container: try store.open(), configuration: store.configuration(client: "sender"))
        engine.start()
        defer { engine.stop() }
        for i in from..<count {
            var message = Record(recordType: "Message", recordID: RecordID(recordName: "\(prefix)-\(i)"))
            message["text"] = .string("message \(i) from \(prefix)")
            message["sender"] = .string(prefix)
            try engine.send(saving: [message])
            say("queued \(prefix)-\(i)")
        }
        guard engine.waitUntilSent(timeout: drainTimeout) else {
            say("unsent \((try? engine.outboxEntries().count) ?? -1) \(engine.blockingFailure?.message ?? "")")
            throw ExitCode(3)
        }
        // A change the engine gave up on is lost to the receivers: say so, rather than "done".
        let failed = (try? engine.outboxEntries())?.compactMap { entry -> String? in
            guard case .failed(_, let message) = entry.state else { return nil }
            return "\(entry.recordID.recordName): \(message)"
        } ?? []
        guard failed.isEmpty else {
            say("failed \(failed.count) \(failed.first ?? "")")
            throw ExitCode(4)
        }
        say("done")
    }
}

struct Receive: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Prints the name of every record that arrives, until EXPECT distinct names have arrived.")

    @OptionGroup var store: ContainerOptions
    @Option var expect: Int
    @Option var timeout = 120.0

    func run() throws {
        var configuration = store.configuration(client: "receiver")
        configuration.startFromBeginning = true
        let engine = try SyncEngine(container: try store.open(), configuration: configuration)
        engine.start()
        defer { engine.stop() }
        var seen = Set<String>()
        let deadline = Date().addingTimeInterval(timeout)
        while seen.count < expect {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else {
                say("timeout \(seen.count)")
                throw ExitCode(1)
            }
            var fds = [pollfd(fd: engine.eventDescriptor, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 1, Int32(min(remaining, 1) * 1000))
            while let event = engine.nextEvent() {
                guard case .recordsChanged(let records) = event else { continue }
                for record in records where record.recordType == "Message" {
                    seen.insert(record.recordID.recordName)
                    say("got \(record.recordID.recordName)")
                }
            }
        }
        say("done")
    }
}
