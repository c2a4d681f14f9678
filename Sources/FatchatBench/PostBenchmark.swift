import FatchatCore
import Foundation
import RecordStore

/// K processes post through the real engine, against K processes committing one raw row per transaction.
struct PostBenchmark {
    let work: URL
    let processes: Int
    let postsPerProcess: Int
    let runs: Int

    /// A PostgreSQL database for the server rows, erased before each run; nil leaves them out.
    var postgresURL: String? = nil

    func run(into report: inout Report) throws {
        let local = try alternate(label: "post", engine: { try engineRun(in: $0) }, raw: { try rawRun(in: $0) })
        add(local, id: "post", engineLabel: "", rawLabel: "raw SQLite, 1 row/txn", into: &report,
            rawNote: "raw: WAL, synchronous=NORMAL, BEGIN IMMEDIATE")
        if let postgresURL {
            let server = try alternate(label: "post-postgresql", engine: { try engineRun(in: $0, postgresURL: postgresURL) },
                                       raw: { _ in try rawPostgresRun(postgresURL) })
            add(server, id: "post.postgresql", engineLabel: ", postgresql", rawLabel: "raw INSERT into PostgreSQL, 1 row/txn", into: &report,
                rawNote: "raw: one INSERT per transaction through postgres-nio, into a table with a (channel, date) index and a GIN text-search index, on \(postgresURL)")
        }
    }

    /// Every run's figures for both sides.
    struct Sides {
        var engineRates: [Double] = [], rawRates: [Double] = []
        var engineCPU: [Double] = [], rawCPU: [Double] = []
        var lost = 0
    }

    /// Runs both sides `runs` times, alternating which goes first, so neither always runs on a warmer machine.
    private func alternate(label: String, engine: (URL) throws -> Side, raw: (URL) throws -> Side) throws -> Sides {
        var sides = Sides()
        for run in 0..<runs {
            let directory = work.appendingPathComponent("\(label)-\(run)")
            try? FileManager.default.removeItem(at: directory)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            for engineSide in run % 2 == 0 ? [true, false] : [false, true] {
                let side = try engineSide ? engine(directory) : raw(directory)
                if engineSide {
                    sides.engineRates.append(side.rate)
                    sides.engineCPU.append(side.cpuPerMessage)
                } else {
                    sides.rawRates.append(side.rate)
                    sides.rawCPU.append(side.cpuPerMessage)
                }
                sides.lost += side.missing
            }
        }
        return sides
    }

    private func add(_ sides: Sides, id: String, engineLabel: String, rawLabel: String, into report: inout Report, rawNote: String) {
        let total = processes * postsPerProcess
        let engine = median(sides.engineRates), raw = median(sides.rawRates)
        report.add(Figure(id: "\(id).engine", label: "post throughput\(engineLabel), \(processes) processes via engine", value: engine, unit: "msg/s",
                          baseline: raw, baselineLabel: rawLabel, distribution: Distribution(sides.engineRates), runs: runs,
                          note: "\(total) messages per run through ChatClient.post (one outbox commit each; the engine batches them to the public database)."))
        report.add(Figure(id: "\(id).ratio", label: "post throughput\(engineLabel), engine ÷ raw", value: engine / raw * 100, unit: "%",
                          target: .atLeast(50, "%"), runs: runs,
                          note: "Median engine rate over median raw rate; \(rawNote), \(processes) processes."))
        report.add(Figure(id: "\(id).cpu", label: "post CPU time per message\(engineLabel), all posting processes", value: median(sides.engineCPU) * 1000, unit: "ms",
                          baseline: median(sides.rawCPU) * 1000, baselineLabel: rawLabel, distribution: Distribution(sides.engineCPU.map { $0 * 1000 }),
                          runs: runs, note: "User + system time of the posting processes from go to done, over the messages posted (not the server's)."))
        report.add(Figure(id: "\(id).lost", label: "messages lost\(engineLabel), engine and raw (all runs)", value: Double(sides.lost), unit: "msgs",
                          target: .atMost(0, "msgs"), runs: runs,
                          note: "Counted in the database after each run: expected \(total) per side per run."))
    }

    /// What one side of one run measured.
    struct Side {
        var rate: Double
        var cpuPerMessage: Double
        var missing: Int
    }

    /// Posts through the engine; counts what reached the public database.
    private func engineRun(in directory: URL, postgresURL: String? = nil) throws -> Side {
        let containerURL = directory.appendingPathComponent("container")
        // The parent creates the container and channel first, so the children do not race on creating them.
        let container = try BenchContainer.make(at: containerURL, privateData: directory.appendingPathComponent("private-parent"), postgresURL: postgresURL)
        let channel = try ChannelName("bench-post")
        _ = try ChatClient(container: container, handle: "parent").createChannel(channel)
        let children = try (0..<processes).map { k in
            try Child(["engine-post", "--container", containerURL.path, "--private-data", directory.appendingPathComponent("private-\(k)").path,
                       "--channel", channel.display, "--count", "\(postsPerProcess)", "--handle", "poster\(k)"])
        }
        return try runTogether(children) {
            guard postgresURL == nil else { return try container.publicDatabase.countRecords(matching: Query(recordType: ChatSchema.messageType)) }
            return try HandSQL(container: containerURL).queue.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM record WHERE type = 'Message'") ?? 0
            }
        }
    }

    private func rawPostgresRun(_ url: String) throws -> Side {
        let server = try RawPostgres(url: url)
        try server.create()
        let children = try (0..<processes).map { k in
            try Child(["raw-pg-post", "--url", url, "--count", "\(postsPerProcess)", "--handle", "poster\(k)"])
        }
        return try runTogether(children) { try server.count() }
    }

    private func rawRun(in directory: URL) throws -> Side {
        let path = directory.appendingPathComponent("raw.sqlite").path
        try RawSQLite.create(path)
        let children = try (0..<processes).map { k in
            try Child(["raw-post", "--database", path, "--count", "\(postsPerProcess)", "--handle", "poster\(k)"])
        }
        return try runTogether(children) { try RawSQLite.count(path) }
    }

    /// Releases the children together, times them until the last one is done, and counts what was stored.
    /// The log benchmark runs its posters through this too.
    func runTogether(_ children: [Child], countStored: () throws -> Int) throws -> Side {
        try startTogether(children, timeout: 120)
        let start = Clock.monotonic()
        for child in children where !child.waitFor(line: "done", timeout: 600) {
            _ = child.finish(timeout: 1)
            throw BenchError("A posting process (pid \(child.pid)) failed; its last output: \(child.output.suffix(3))")
        }
        let seconds = Double(Clock.monotonic() - start) / 1e9
        for child in children where child.finish(timeout: 60) != 0 {
            throw BenchError("A posting process (pid \(child.pid)) exited badly after it was done; its last output: \(child.output.suffix(3))")
        }
        let total = processes * postsPerProcess
        let cpu = children.compactMap { $0.values(for: "cpu").last.flatMap(Double.init) }.reduce(0, +)
        return Side(rate: Double(total) / seconds, cpuPerMessage: cpu / Double(total), missing: total - (try countStored()))
    }
}
