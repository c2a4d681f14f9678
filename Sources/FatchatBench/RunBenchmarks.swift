import ArgumentParser
import FatchatCore
import Foundation
import RecordStore

/// Runs the selected benchmarks, prints the table and writes the JSON.
struct RunBenchmarks: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Runs the benchmarks (the default).")
    @OptionGroup var settings: BenchSettings

    /// Seeding a container this size is measured on a scratch copy when the real one is reused.
    static let scratchSeedLimit = 100_000

    func run() throws {
        let selected = try settings.selected()
        let work = settings.workURL
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        var report = Report(started: ISO8601DateFormatter().string(from: Date()), commandLine: CommandLine.arguments,
                            machine: MachineDescription.current(containerPath: settings.containerURL.deletingLastPathComponent().path),
                            settings: settings.summary)

        let needsSeed = selected.contains { [.queries, .firstFrame, .idle].contains($0) }
        var info: SeedInfo?
        if selected.contains(.seed) || needsSeed {
            info = try prepareSeed(measure: selected.contains(.seed), work: work, report: &report)
        }
        if selected.contains(.post) {
            progress("post throughput: \(settings.processCount) processes × \(settings.postCount), \(settings.postRunCount) runs")
            try PostBenchmark(work: work, processes: settings.processCount, postsPerProcess: settings.postCount, runs: settings.postRunCount,
                              postgresURL: settings.postgres).run(into: &report)
        }
        if selected.contains(.delivery) {
            progress("delivery latency: \(settings.deliveryCount) messages at \(settings.deliveryPerSecond)/s, receivers \(settings.receiverCounts)")
            try DeliveryBenchmark(work: work, messages: settings.deliveryCount, perSecond: settings.deliveryPerSecond, receiverCounts: settings.receiverCounts,
                                  postgresURL: settings.postgres, postgresReceiverCounts: settings.postgresReceiverCounts).run(into: &report)
        }
        if selected.contains(.queries), let info {
            progress("queries: \(settings.queryRunCount) runs each, deep page \(settings.depthPages)")
            // Each run starts with no private data, so every page is read for the first time: no signature verdict is kept yet.
            let privateData = work.appendingPathComponent("private-query")
            try? FileManager.default.removeItem(at: privateData)
            let open = { try Container(url: settings.containerURL, options: Container.Options(create: false, privateDataDirectory: privateData, naming: .fatchat)) }
            try QueryBenchmark(container: try open(), info: info, runs: settings.queryRunCount, depth: settings.depthPages, reopen: open).run(into: &report)
        }
        if selected.contains(.queries), let url = settings.postgres {
            try serverQueries(url, work: work, report: &report)
        }
        let client = ClientBenchmarks(container: settings.containerURL, work: work)
        if selected.contains(.firstFrame) {
            progress("start to first frame: \(settings.frameRunCount) runs")
            try client.firstFrame(runs: settings.frameRunCount, into: &report)
        }
        if selected.contains(.idle) {
            progress("idle CPU: \(settings.idleDuration) s")
            let without = try client.idleCPU(seconds: settings.idleDuration, into: &report)
            progress("idle CPU with presence on: \(settings.idleDuration) s")
            try client.idleCPU(seconds: settings.idleDuration, presence: true, without: without, into: &report)
            progress("CPU per presence heartbeat write: \(settings.heartbeatRounds) rounds of \(settings.heartbeatCount)")
            try client.heartbeatWrites(rounds: settings.heartbeatRounds, count: settings.heartbeatCount, into: &report)
            progress("idle CPU and memory of \(settings.idleClientCount) idle clients: \(settings.idleDuration) s, then \(settings.presenceDuration) s with presence on")
            try client.idleCrowd(clients: settings.idleClientCount, seconds: settings.idleDuration, presenceSeconds: settings.presenceDuration, into: &report)
        }
        if selected.contains(.log) {
            let parts = try settings.selectedLogParts
            progress("log engine: " + LogBenchmark.Part.allCases.filter(parts.contains).map(\.rawValue).joined(separator: ", ")
                     + " (catch-up of \(settings.logMessageCount) messages, \(settings.logCatchUpRunCount) runs)")
            try LogBenchmark(work: work, catchUpMessages: settings.logMessageCount, catchUpRuns: settings.logCatchUpRunCount,
                             processes: settings.processCount, postsPerProcess: settings.postCount, deliveryMessages: settings.deliveryCount,
                             parts: parts, crowd: settings.logReceiverCount).run(into: &report)
        }
        report.notes.append("Load average at the end (1, 5, 15 min): \(MachineDescription.loadAverage()) on \(report.machine.cores) cores.")
        if settings.smoke { report.notes.append("Smoke run: tiny sizes, for CI only; these figures say nothing about performance.") }
        print(report.text, terminator: "")
        try report.writeJSON(to: settings.jsonOut)
        print("JSON written to \(settings.jsonOut)")
    }

    /// Seeds (or reuses) messages on the PostgreSQL database and measures its queries beside the single file's.
    private func serverQueries(_ url: String, work: URL, report: inout Report) throws {
        let count = settings.postgresMessageCount
        let seeder = Seeder(url: work.appendingPathComponent("seed-postgresql-\(count)x\(settings.channelCount)"),
                            privateDirectory: work.appendingPathComponent("private-seed-postgresql"),
                            messages: count, channels: settings.channelCount, postgresURL: url)
        let info: SeedInfo
        if let existing = seeder.existing() {
            progress("queries on PostgreSQL: reusing its \(count) messages")
            info = existing
        } else {
            progress("queries on PostgreSQL: seeding \(count) messages")
            let seeded = try seeder.seed()
            info = seeded.info
            report.notes.append("PostgreSQL queries: " + seeded.note)
        }
        let container = try Container(url: seeder.url, options: Container.Options(create: false, privateDataDirectory: seeder.privateDirectory, naming: .fatchat))
        progress("queries on PostgreSQL: \(settings.queryRunCount) runs each, deep page \(settings.depthPages)")
        try PostgresQueryBenchmark(container: container, info: info, runs: settings.queryRunCount, depth: settings.depthPages).run(into: &report)
    }

    /// Reuses or seeds the container; with `measure`, adds the seeding figure with its raw baseline.
    private func prepareSeed(measure: Bool, work: URL, report: inout Report) throws -> SeedInfo {
        let seeder = Seeder(url: settings.containerURL, privateDirectory: work.appendingPathComponent("private-seed"),
                            messages: settings.messageCount, channels: settings.channelCount)
        let info: SeedInfo
        var measured: (count: Int, rate: Double, note: String)?
        if let existing = seeder.existing() {
            progress("reusing the seeded container \(settings.containerURL.path)")
            info = existing
            if measure {
                let count = min(settings.messageCount, Self.scratchSeedLimit)
                progress("seed: measuring on a scratch container of \(count) messages")
                let scratch = Seeder(url: work.appendingPathComponent("seed-scratch"), privateDirectory: work.appendingPathComponent("private-scratch"),
                                     messages: count, channels: settings.channelCount)
                defer { try? FileManager.default.removeItem(at: scratch.url) }
                let result = try scratch.seed()
                measured = (count, result.recordsPerSecond, "The \(settings.messageCount)-message container was reused, so seeding was measured on a scratch container of \(count). " + result.note)
            }
        } else {
            // A container named with --container may be hours of seeding, or not a seed at all: it is
            // never removed to seed again, only one the bench keeps in its work directory.
            if settings.container != nil, FileManager.default.fileExists(atPath: settings.containerURL.path) {
                throw BenchError("\(settings.containerURL.path) does not hold the seed asked for (\(settings.messageCount) messages in "
                                 + "\(settings.channelCount) channels), so it was left as it is; name another --container, or remove this one to seed it again.")
            }
            progress("seed: \(settings.messageCount) messages in \(settings.channelCount) channels at \(settings.containerURL.path)")
            let result = try seeder.seed()
            info = result.info
            measured = (settings.messageCount, result.recordsPerSecond, result.note)
        }
        if let measured {
            let rawPath = work.appendingPathComponent("seed-raw.sqlite").path
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: rawPath + suffix) }
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: rawPath + suffix) } }
            let raw = try RawSQLite.seed(rawPath, count: measured.count, channels: settings.channelCount)
            report.add(Figure(id: "seed.rate", label: "seed, \(measured.count) messages in 400-record batches", value: measured.rate, unit: "records/s",
                              baseline: raw, baselineLabel: "raw SQLite + FTS5, 400 rows/txn", runs: 1,
                              note: measured.note + " No target in the issues."))
        }
        return info
    }

    private func progress(_ line: String) {
        FileHandle.standardError.write(Data("[fatchat-bench] \(line)\n".utf8))
    }
}
