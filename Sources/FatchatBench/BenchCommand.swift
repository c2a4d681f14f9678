import ArgumentParser
import FatchatCore
import Foundation

/// `fatchat-bench`: where Fatchat stands against raw SQLite and against its targets.
@main
struct FatchatBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fatchat-bench",
        abstract: "Measures Fatchat against raw SQLite and against its performance targets; build with -c release.",
        subcommands: [RunBenchmarks.self, ChildCommand.self],
        defaultSubcommand: RunBenchmarks.self)

    /// Its children are clients, so they allocate as `fatchat` does.
    static func main() {
        ProcessMemory.useOneArena()
        main(nil)
    }
}

/// The benchmarks a run can select with `--only`.
enum BenchmarkName: String, CaseIterable, ExpressibleByArgument, Sendable {
    case seed, post, delivery, queries
    case firstFrame = "first-frame"
    case idle
    case log
}

/// Sizes and selections; `--smoke` replaces the defaults with tiny ones.
struct BenchSettings: ParsableArguments {
    @Option(help: "Comma-separated benchmarks to run: seed, post, delivery, queries, first-frame, idle, log (default: all).")
    var only: String?
    @Flag(help: "A run of a few seconds with tiny sizes, for CI.")
    var smoke = false
    @Option(help: "Messages in the seeded container (default 1000000; smoke 2000).")
    var messages: Int?
    @Option(help: "Channels in the seeded container (default 100; smoke 4).")
    var channels: Int?
    @Option(help: "The seeded container; reused when it holds the requested seed, never removed (default: WORK-DIR/seed-NxM, seeded again when it does not).")
    var container: String?
    @Option(help: "Where temporary containers and private data go; on the filesystem you want measured.")
    var workDir = "bench-data"
    @Option(help: "Posting processes (default 8; smoke 2).")
    var processes: Int?
    @Option(help: "Messages each posting process commits (default 1000; smoke 20).")
    var postsPerProcess: Int?
    @Option(help: "Repetitions of the post benchmark (default 5; smoke 2).")
    var postRuns: Int?
    @Option(help: "Messages sent per delivery configuration (default 200; smoke 10).")
    var deliveryMessages: Int?
    @Option(help: "Receiver counts for delivery latency, comma-separated (default 1,8; smoke 1,2).")
    var receivers: String?
    @Option(help: "Messages per second the delivery sender commits, on average, locally and through PostgreSQL (default 50; issue 18's crowd figures are at 10).")
    var deliveryRate: Double?
    @Option(help: "A PostgreSQL database (URL without a password) for the postgresql delivery rows; erased before each configuration, so give the bench one of its own. Without it, no postgresql rows.")
    var postgres: String?
    @Option(help: "Receiver counts for delivery through PostgreSQL, comma-separated (default 1,8,64; smoke 1,2).")
    var postgresReceivers: String?
    @Option(help: "Messages seeded on PostgreSQL for its query rows (default 1000000; smoke 2000); the seed is reused only by a run that erased nothing since (--only queries).")
    var postgresMessages: Int?
    @Option(help: "Repetitions of each query (default 200; smoke 10).")
    var queryRuns: Int?
    @Option(help: "The deep cursor page, in pages of 50 (default 1000; smoke 5).")
    var depth: Int?
    @Option(help: "Repetitions of start to first frame (default 10; smoke 2).")
    var frameRuns: Int?
    @Option(help: "Seconds of idle CPU measurement (default 60; smoke 2).")
    var idleSeconds: Double?
    @Option(help: "Idle clients run at once for the crowd's idle CPU and memory per client (default 100; smoke 2).")
    var idleClients: Int?
    @Option(help: "Seconds of the crowd's idle CPU with presence on (default: the idle seconds, and at least a heartbeat's period and 10 s; smoke 2).")
    var presenceSeconds: Double?
    @Option(help: "Messages in the log a new client catches up from, for the log benchmark (default 1000000; smoke 2000).")
    var logMessages: Int?
    @Option(help: "Repetitions of the log catch-up, whose median is reported (default 3; smoke 1).")
    var logCatchUpRuns: Int?
    @Option(help: "Parts of the log benchmark, comma-separated: catch-up, post, bindfs, glusterfs (default: all; smoke leaves out glusterfs).")
    var logParts: String?
    @Option(help: "Receivers of the log engine's crowd delivery across bindfs mounts, on the sender's mount and on another (default 32; smoke 2).")
    var logReceivers: Int?
    @Option(help: "Where the JSON results go.")
    var jsonOut = "bench-results.json"

    func pick<T>(_ value: T?, _ full: T, _ small: T) -> T { value ?? (smoke ? small : full) }

    var messageCount: Int { pick(messages, 1_000_000, 2_000) }
    var channelCount: Int { pick(channels, 100, 4) }
    var processCount: Int { pick(processes, 8, 2) }
    var postCount: Int { pick(postsPerProcess, 1000, 20) }
    var postRunCount: Int { pick(postRuns, 5, 2) }
    var deliveryCount: Int { pick(deliveryMessages, 200, 10) }
    var deliveryPerSecond: Double { deliveryRate ?? 50 }
    var queryRunCount: Int { pick(queryRuns, 200, 10) }
    var depthPages: Int { pick(depth, 1000, 5) }
    var frameRunCount: Int { pick(frameRuns, 10, 2) }
    var idleDuration: Double { pick(idleSeconds, 60, 2) }
    var idleClientCount: Int { pick(idleClients, 100, 2) }
    /// Long enough that every client of the crowd writes a heartbeat, and receives everyone else's, within it.
    var presenceDuration: Double { pick(presenceSeconds, max(idleDuration, Presence.heartbeat + 10), 2) }
    /// Rounds of presence heartbeat writes, and writes a round, for the CPU of one write.
    var heartbeatRounds: Int { smoke ? 2 : 9 }
    var heartbeatCount: Int { smoke ? 5 : 200 }
    var logMessageCount: Int { pick(logMessages, 1_000_000, 2_000) }
    var postgresMessageCount: Int { pick(postgresMessages, 1_000_000, 2_000) }
    var logCatchUpRunCount: Int { pick(logCatchUpRuns, 3, 1) }
    var logReceiverCount: Int { pick(logReceivers, 32, 2) }
    var selectedLogParts: Set<LogBenchmark.Part> {
        get throws {
            guard let logParts else { return Set(LogBenchmark.Part.allCases).subtracting(smoke ? [.glusterfs] : []) }
            return Set(try logParts.split(separator: ",").map { name in
                guard let part = LogBenchmark.Part(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                    throw ValidationError("Unknown part of the log benchmark '\(name)'; choose from \(LogBenchmark.Part.allCases.map(\.rawValue).joined(separator: ", ")).")
                }
                return part
            })
        }
    }
    var receiverCounts: [Int] {
        (receivers ?? (smoke ? "1,2" : "1,8")).split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    var postgresReceiverCounts: [Int] {
        (postgresReceivers ?? (smoke ? "1,2" : "1,8,64")).split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    var workURL: URL { URL(fileURLWithPath: workDir).standardizedFileURL }
    var containerURL: URL {
        container.map { URL(fileURLWithPath: $0).standardizedFileURL }
            ?? workURL.appendingPathComponent("seed-\(messageCount)x\(channelCount)")
    }

    func selected() throws -> [BenchmarkName] {
        guard let only else { return BenchmarkName.allCases }
        return try only.split(separator: ",").map { name in
            guard let parsed = BenchmarkName(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("Unknown benchmark '\(name)'; choose from \(BenchmarkName.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            return parsed
        }
    }

    func validate() throws {
        guard messageCount > 0, channelCount > 0, processCount > 0, postCount > 0, postRunCount > 0, deliveryCount > 0,
              deliveryPerSecond > 0, queryRunCount > 0, depthPages > 1, logMessageCount > 0, postgresMessageCount > 0, logCatchUpRunCount > 0, logReceiverCount > 0, frameRunCount > 0, idleDuration > 0, presenceDuration > 0, idleClientCount > 0, !receiverCounts.isEmpty,
              receiverCounts.allSatisfy({ $0 > 0 }), postgresReceiverCounts.allSatisfy({ $0 > 0 }) else {
            throw ValidationError("Sizes must be positive (and --depth at least 2).")
        }
        _ = try selected()
        _ = try selectedLogParts
    }

    /// The settings as strings, for the JSON report.
    var summary: [String: String] {
        ["messages": "\(messageCount)", "channels": "\(channelCount)", "processes": "\(processCount)",
         "postsPerProcess": "\(postCount)", "postRuns": "\(postRunCount)", "deliveryMessages": "\(deliveryCount)", "deliveryRate": "\(deliveryPerSecond)",
         "receivers": receiverCounts.map(String.init).joined(separator: ","),
         "postgres": postgres ?? "none", "postgresReceivers": postgresReceiverCounts.map(String.init).joined(separator: ","),
         "postgresMessages": "\(postgresMessageCount)", "queryRuns": "\(queryRunCount)",
         "depth": "\(depthPages)", "frameRuns": "\(frameRunCount)", "idleSeconds": "\(idleDuration)", "idleClients": "\(idleClientCount)", "presenceSeconds": "\(presenceDuration)", "logMessages": "\(logMessageCount)",
         "logCatchUpRuns": "\(logCatchUpRunCount)", "logParts": logParts ?? "all", "logReceivers": "\(logReceiverCount)",
         "smoke": "\(smoke)", "container": containerURL.path, "workDir": workURL.path]
    }
}
