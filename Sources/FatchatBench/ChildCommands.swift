import ArgumentParser
import FatchatCore
import Foundation
import RecordStore
import SyncEngine
import TerminalUI

/// The modes the benchmark re-executes itself in; not meant to be run by hand.
struct ChildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "child", abstract: "Internal: one process of a multi-process benchmark.", shouldDisplay: false,
        subcommands: [EnginePost.self, RawPost.self, RawPostgresPost.self, Receive.self, PipeEcho.self, FirstFrameChild.self, Noop.self, IdleClient.self, IdleFloor.self, WakeParts.self, HeartbeatWrites.self])
}

/// Where a child finds its container and its own private data (each child stands for one client).
struct ChildStore: ParsableArguments {
    @Option var container: String
    @Option var privateData: String
    @Option(help: "local or network; detected when omitted.")
    var mode: String?
    @Option(help: "sqlite or log; as the container records when omitted.")
    var engine: String?

    func open() throws -> Container {
        var options = Container.Options(privateDataDirectory: URL(fileURLWithPath: privateData), naming: .fatchat)
        if let mode {
            guard let parsed = JournalMode(rawValue: mode) else { throw ValidationError("--mode is local or network") }
            options.mode = parsed
        }
        if let engine {
            guard let parsed = StorageEngine(rawValue: engine) else { throw ValidationError("--engine is sqlite or log") }
            options.engine = parsed
        }
        return try Container(url: URL(fileURLWithPath: container), options: options)
    }
}

/// Posts COUNT messages through `ChatClient.post` (one outbox commit each), then waits until all are sent.
struct EnginePost: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "engine-post")
    @OptionGroup var store: ChildStore
    @Option var channel: String
    @Option var count: Int
    @Option var handle: String

    func run() throws {
        let client = try ChatClient(container: try store.open(), handle: handle)
        let name = try ChannelName(channel)
        client.start()
        defer { client.stop() }
        try client.join(name)
        guard client.waitUntilSent(timeout: 60) else { throw BenchError("The join of \(name) was not sent within 60 s.") }
        waitForGo()
        let cpu = CPUMeter()
        for i in 0..<count { try client.post("\(handle) message \(i)", to: name) }
        guard client.waitUntilSent(timeout: 300) else { throw BenchError("\(handle): the outbox did not empty within 300 s.") }
        cpu.report()
        say("done")
    }
}

/// Inserts COUNT rows into a raw SQLite file, one row per `BEGIN IMMEDIATE` transaction.
struct RawPost: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "raw-post")
    @Option var database: String
    @Option var count: Int
    @Option var handle: String

    func run() throws {
        let queue = try RawSQLite.open(database)
        waitForGo()
        let cpu = CPUMeter()
        for i in 0..<count {
            try queue.inTransaction(.immediate) { db in
                try RawSQLite.insert(db, name: "\(handle)-\(i)", channel: "channel.bench-post", handle: handle, text: "\(handle) message \(i)")
                return .commit
            }
        }
        cpu.report()
        say("done")
    }
}

/// Inserts COUNT message rows into PostgreSQL, one statement and transaction each, through postgres-nio.
struct RawPostgresPost: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "raw-pg-post")
    @Option var url: String
    @Option var count: Int
    @Option var handle: String

    func run() throws {
        let server = try RawPostgres(url: url)
        waitForGo()
        let cpu = CPUMeter()
        for i in 0..<count {
            try server.insert(name: "\(handle)-\(i)", channel: "channel.bench-post", handle: handle, text: "\(handle) message \(i)")
        }
        cpu.report()
        say("done")
    }
}

/// Runs a SyncEngine and prints `lat MS` for every message whose text carries its send time (`t=NANOSECONDS`).
struct Receive: ParsableCommand {
    @OptionGroup var store: ChildStore
    @Option var expect: Int
    @Option var timeout: Double
    @Flag(help: "Poll only, as on a network filesystem where inotify does not see other machines' commits.")
    var noInotify = false

    func run() throws {
        var configuration = SyncEngine.Configuration()
        configuration.useInotify = !noInotify
        let engine = try SyncEngine(container: try store.open(), configuration: configuration)
        engine.start()
        defer { engine.stop() }
        // The first status event comes after the first fetch, which fixed the starting token.
        var ready = false
        var seen = Set<String>()
        let deadline = Date().addingTimeInterval(timeout)
        while seen.count < expect, Date() < deadline {
            var fds = [pollfd(fd: engine.eventDescriptor, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 1, 200)
            while let event = engine.nextEvent() {
                let now = Clock.realtime()
                switch event {
                case .status where !ready:
                    ready = true
                    say("cpu-ready \(processCPUSeconds())")
                    say("ready")
                case .recordsChanged(let records):
                    for record in records where record.recordType == ChatSchema.messageType {
                        guard let text = record["text"]?.stringValue, text.hasPrefix("t="),
                              let sent = UInt64(text.dropFirst(2)), seen.insert(record.recordID.recordName).inserted else { continue }
                        say("lat \(Double(Int64(bitPattern: now &- sent)) / 1e6)")
                    }
                default:
                    break
                }
            }
        }
        say("received \(seen.count)")
        say("cpu \(processCPUSeconds())")
    }
}

/// User plus system CPU seconds this process used so far.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// The latency floor: reads `t=NANOSECONDS` lines from standard input and prints `lat MS` for each.
struct PipeEcho: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pipe-echo")
    @Option var expect: Int

    func run() throws {
        say("ready")
        var count = 0
        while count < expect, let line = readLine() {
            let now = Clock.realtime()
            guard line.hasPrefix("t="), let sent = UInt64(line.dropFirst(2)) else { continue }
            say("lat \(Double(Int64(bitPattern: now &- sent)) / 1e6)")
            count += 1
        }
        say("received \(count)")
    }
}

/// Prints the time at once and exits: the cost of starting this executable, for the first-frame baseline.
struct Noop: ParsableCommand {
    func run() throws {
        say("frame \(Clock.realtime())")
        let memory = memoryMB()
        say("rss \(memory.rss) \(memory.hwm)")
    }
}

/// The floor of an idle Swift process here: it waits until standard input closes, and does nothing else.
/// (Until the twenty-second round it first used Dispatch's global queue, as clients did through their
/// helpers; on Linux that starts a timer waking the process once a second for good, which clients no
/// longer pay.)
struct IdleFloor: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "idle-floor")

    func run() throws {
        say("ready")
        while readLine() != nil {}
    }
}

/// A client at rest: opens the chat, starts its engine, and waits until standard input closes.
struct IdleClient: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "idle")
    @OptionGroup var store: ChildStore

    @Flag(help: "Run presence as a quiet full-screen client does: online at start, a tick when the heartbeat is due (at most 30 s apart), events drained.")
    var presence = false

    @Flag(help: "With --presence, follow others' presence, as a full-screen client whose member list is shown does; by default none is followed, as with the list hidden.")
    var memberList = false

    func run() throws {
        let client = try ChatClient(container: try store.open(), handle: "idle")
        client.start()
        defer { client.stop() }
        say("ready")
        guard presence else {
            while readLine() != nil {}
            return
        }
        client.followPresence(memberList)
        let session = ChatSession(client: client)
        session.startPresence(autoAwayAfter: 600)
        defer { session.stopPresence() }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var fds = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: client.eventDescriptor, events: Int16(POLLIN), revents: 0)]
            // As a quiet full-screen client sleeps: until its heartbeat is due, or the longest quiet wait.
            let wait = TickPace().quietWait(until: session.beacon?.nextDue) / .milliseconds(1)
            _ = poll(&fds, 2, Int32(wait.rounded(.up)))
            if fds[0].revents != 0, read(STDIN_FILENO, &buffer, buffer.count) <= 0 { return }
            if fds[1].revents != 0 { _ = client.drainEvents() }
            session.tickPresence()
        }
    }
}

/// Publishes the same presence ROUNDS × COUNT times, as a quiet client's heartbeat does (a quiet save over the
/// last version, signed, with its proof), waiting for each write; prints `round CPU-SECONDS` per round. With
/// `--raw FILE`, upserts a row of the same size by hand into a raw SQLite file instead, the floor of such a write.
struct HeartbeatWrites: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "heartbeats")
    @OptionGroup var store: ChildStore
    @Option var rounds: Int
    @Option var count: Int
    @Option(help: "A raw SQLite file to upsert into instead of the container.")
    var raw: String?

    func run() throws {
        let write: (Int) throws -> Void
        if let raw {
            let queue = try RawSQLite.open(raw)
            try queue.write { try $0.execute(sql: "CREATE TABLE IF NOT EXISTS presence (name TEXT PRIMARY KEY, fields TEXT NOT NULL, modified REAL NOT NULL)") }
            let fields = String(repeating: "x", count: 600)
            write = { _ in
                try queue.inTransaction(.immediate) { db in
                    try db.cachedStatement(sql: "INSERT INTO presence (name, fields, modified) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET fields = excluded.fields, modified = excluded.modified")
                        .execute(arguments: ["presence.me", fields, Date().timeIntervalSince1970])
                    return .commit
                }
            }
        } else {
            let client = try ChatClient(container: try store.open(), handle: "beat")
            let start = Date()
            write = { i in
                client.publishPresence(.online, at: start.addingTimeInterval(Double(i)))
                guard client.flushEphemeral(timeout: 30) else { throw BenchError("A presence write did not finish within 30 s.") }
            }
        }
        try write(0)  // The first creates the record; a heartbeat replaces it.
        var n = 1
        for _ in 0..<rounds {
            let before = processCPUSeconds()
            for _ in 0..<count {
                try write(n)
                n += 1
            }
            say("round \(processCPUSeconds() - before)")
        }
        say("done")
    }
}
