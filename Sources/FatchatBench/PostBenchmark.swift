import FatchatCore
import Foundation
import RecordStore

/// K processes post through the real engine, against K processes committing one raw row per transaction.
struct PostBenchmark {
    let work: URL
    let processes: Int
    let postsPerProcess: Int
    let runs: Int

    func run(into report: inout Report) throws {
        var engineRates: [Double] = [], rawRates: [Double] = []
        var engineCPU: [Double] = [], rawCPU: [Double] = []
        var lost = 0
        for run in 0..<runs {
            let directory = work.appendingPathComponent("post-\(run)")
            try? FileManager.default.removeItem(at: directory)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            // Alternate the order, so neither side always runs on a warmer machine.
            let engineFirst = run % 2 == 0
            for side in engineFirst ? [true, false] : [false, true] {
                if side {
                    let side = try engineRun(in: directory)
                    engineRates.append(side.rate)
                    engineCPU.append(side.cpuPerMessage)
                    lost += side.missing
                } else {
                    let side = try rawRun(in: directory)
                    rawRates.append(side.rate)
                    rawCPU.append(side.cpuPerMessage)
                    lost += side.missing
                }
            }
        }
        let total = processes * postsPerProcess
        let engine = median(engineRates), raw = median(rawRates)
        report.add(Figure(id: "post.engine", label: "post throughput, \(processes) processes via engine", value: engine, unit: "msg/s",
                          baseline: raw, baselineLabel: "raw SQLite, 1 row/txn", distribution: Distribution(engineRates), runs: runs,
                          note: "\(total) messages per run through ChatClient.post (one outbox commit each; the engine batches them to the public database)."))
        report.add(Figure(id: "post.ratio", label: "post throughput, engine ÷ raw SQLite", value: engine / raw * 100, unit: "%",
                          target: .atLeast(50, "%"), runs: runs,
                          note: "Median engine rate over median raw rate; raw: WAL, synchronous=NORMAL, BEGIN IMMEDIATE, \(processes) processes."))
        report.add(Figure(id: "post.cpu", label: "post CPU time per message, all posting processes", value: median(engineCPU) * 1000, unit: "ms",
                          baseline: median(rawCPU) * 1000, baselineLabel: "raw SQLite, 1 row/txn", distribution: Distribution(engineCPU.map { $0 * 1000 }),
                          runs: runs, note: "User + system time of the posting processes from go to done, over the messages posted."))
        report.add(Figure(id: "post.lost", label: "messages lost, engine and raw (all runs)", value: Double(lost), unit: "msgs",
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
    private func engineRun(in directory: URL) throws -> Side {
        let containerURL = directory.appendingPathComponent("container")
        // The parent creates the container and channel first, so the children do not race on creating them.
        let container = try Container(url: containerURL, options: Container.Options(privateDataDirectory: directory.appendingPathComponent("private-parent"), naming: .fatchat))
        let channel = try ChannelName("bench-post")
        _ = try ChatClient(container: container, handle: "parent").createChannel(channel)
        let children = try (0..<processes).map { k in
            try Child(["engine-post", "--container", containerURL.path, "--private-data", directory.appendingPathComponent("private-\(k)").path,
                       "--channel", channel.display, "--count", "\(postsPerProcess)", "--handle", "poster\(k)"])
        }
        return try runTogether(children) {
            try HandSQL(container: containerURL).queue.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM record WHERE type = 'Message'") ?? 0
            }
        }
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
