import FatchatCore
import Foundation
import RecordStore

/// The `log` engine: a new client's catch-up from a long log, posting from many processes,
/// and delivery between two FUSE mounts of one directory, each beside a baseline from the same run.
struct LogBenchmark {
    /// The parts a run can pick with `--log-parts`.
    enum Part: String, CaseIterable, Sendable {
        case catchUp = "catch-up", post, bindfs, glusterfs
    }

    let work: URL
    let catchUpMessages: Int
    let catchUpRuns: Int
    let processes: Int
    let postsPerProcess: Int
    let deliveryMessages: Int
    /// GlusterFS is left out of a smoke run, which CI runs beside the tests that start their own glusterd on the same port.
    let parts: Set<Part>
    /// Receivers of the crowd delivery: through the sender's own mount, and through the other.
    var crowd = 32

    func run(into report: inout Report) throws {
        if parts.contains(.catchUp) { try catchUp(into: &report) }
        if parts.contains(.post) { try post(into: &report) }
        if parts.contains(.bindfs) { try delivery(into: &report) }
        if parts.contains(.glusterfs) {
            try glusterDelivery(into: &report)
        } else {
            report.notes.append("Log delivery across two GlusterFS mounts was not measured in this run.")
        }
    }

    private func options(_ directory: URL, _ name: String) -> Container.Options {
        var options = Container.Options(privateDataDirectory: directory.appendingPathComponent(name), naming: .fatchat)
        options.engine = .log
        return options
    }

    // MARK: Catch-up

    /// A writer's log of N messages, read by a client that has never seen it, against raw SQLite inserting as many rows.
    ///
    /// The log is written once; each run catches up with it into a cache of its own, and the median run is reported.
    private func catchUp(into report: inout Report) throws {
        let directory = work.appendingPathComponent("log-catchup")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let containerURL = directory.appendingPathComponent("container")
        let writer = try Container(url: containerURL, options: options(directory, "private-writer"))
        let channel = try ChannelName("bench-catchup")
        _ = try ChatClient(container: writer, handle: "writer").createChannel(channel)
        // Straight into the writer's log, a batch at a time: this measures reading, not writing.
        var written = 0
        while written < catchUpMessages {
            let batch = min(10_000, catchUpMessages - written)
            try writer.appendToOwnLogUnapplied((0..<batch).map { i in
                Seeder.message(text: "message number \(written + i) with a few words in it", handle: "writer", in: channel)
            })
            written += batch
        }

        let load = MachineDescription.loadAverage()
        var runs: [(seconds: Double, cpu: Double, applied: Int, shown: Int, marks: Double)] = []
        for run in 0..<catchUpRuns {
            let privateDirectory = directory.appendingPathComponent("private-reader-\(run)")
            defer { try? FileManager.default.removeItem(at: privateDirectory) }
            let reader = try Container(url: containerURL, options: options(directory, "private-reader-\(run)"))
            let cpuBefore = processCPUSeconds()
            let start = Clock.monotonic()
            let applied = try reader.refreshPublicDatabase()
            let seconds = Double(Clock.monotonic() - start) / 1e9
            let cpu = processCPUSeconds() - cpuBefore
            // A chat client then sets its index marks on the new cache, which indexes every message's text.
            let marksStart = Clock.monotonic()
            try ChatClient.prepareIndexes(reader.publicDatabase)
            let marks = Double(Clock.monotonic() - marksStart) / 1e9
            let shown = try reader.publicDatabase.countRecords(matching: Query(recordType: ChatSchema.messageType))
            runs.append((seconds, cpu, applied, shown, marks))
        }
        let middle = runs.sorted { $0.seconds < $1.seconds }[runs.count / 2]
        let rates = runs.map { Double(catchUpMessages) / $0.seconds * 60 }

        let rawPath = directory.appendingPathComponent("raw.sqlite").path
        let raw = try RawSQLite.seed(rawPath, count: catchUpMessages, channels: 1)
        report.add(Figure(id: "log.catchup.rate", label: "log catch-up, \(catchUpMessages) messages from one log", value: median(rates), unit: "msgs/min",
                          baseline: raw * 60, baselineLabel: "raw SQLite + FTS5 inserts, 400 rows/txn", target: .atLeast(1_000_000, "msgs/min"),
                          distribution: Distribution(rates), runs: runs.count,
                          note: String(format: "Median run: %.1f s wall, %.1f s CPU; %d entries applied, %d messages shown (expected %d).",
                                       middle.seconds, middle.cpu, middle.applied, middle.shown, catchUpMessages)
                              + " Wall times of all runs: \(runs.map { String(format: "%.1f", $0.seconds) }.joined(separator: ", ")) s; load average before: \(load)."))
        let withMarks = runs.map { Double(catchUpMessages) / ($0.seconds + $0.marks) * 60 }
        report.add(Figure(id: "log.catchup.indexed", label: "log catch-up and then the chat's index marks, \(catchUpMessages) messages",
                          value: median(withMarks), unit: "msgs/min", baseline: raw * 60, baselineLabel: "raw SQLite + FTS5 inserts, 400 rows/txn",
                          distribution: Distribution(withMarks), runs: runs.count,
                          note: "The marks (queryable channel, searchable text, as a chat client sets them once per cache) took "
                              + runs.map { String(format: "%.1f", $0.marks) }.joined(separator: ", ") + " s after each catch-up."))
        report.add(Figure(id: "log.catchup.lost", label: "log catch-up, messages not shown (worst run)",
                          value: Double(runs.map { catchUpMessages - $0.shown }.max() ?? 0), unit: "msgs", target: .atMost(0, "msgs"), runs: runs.count))
    }

    // MARK: Post throughput

    /// K processes post through ChatClient on a log container, then on a sqlite one, alternating which goes first.
    private func post(into report: inout Report) throws {
        var rates: [StorageEngine: [Double]] = [:]
        var lost = 0
        for run in 0..<2 {
            for engine in run % 2 == 0 ? [StorageEngine.log, .sqlite] : [.sqlite, .log] {
                let (rate, missing) = try postRun(engine: engine, in: work.appendingPathComponent("log-post-\(run)-\(engine.rawValue)"))
                rates[engine, default: []].append(rate)
                lost += missing
            }
        }
        let log = median(rates[.log] ?? []), sqlite = median(rates[.sqlite] ?? [])
        report.add(Figure(id: "log.post", label: "post throughput, \(processes) processes, log engine", value: log, unit: "msg/s",
                          baseline: sqlite, baselineLabel: "sqlite engine, same posts", distribution: Distribution(rates[.log] ?? []), runs: 2,
                          note: "\(processes * postsPerProcess) messages per run through ChatClient.post; each process is a client with its own log. Lost (both engines): \(lost)."))
    }

    private func postRun(engine: StorageEngine, in directory: URL) throws -> (rate: Double, missing: Int) {
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let containerURL = directory.appendingPathComponent("container")
        var parentOptions = options(directory, "private-parent")
        parentOptions.engine = engine
        let container = try Container(url: containerURL, options: parentOptions)
        let channel = try ChannelName("bench-post")
        _ = try ChatClient(container: container, handle: "parent").createChannel(channel)
        let children = try (0..<processes).map { k in
            try Child(["engine-post", "--container", containerURL.path, "--private-data", directory.appendingPathComponent("private-\(k)").path,
                       "--engine", engine.rawValue, "--channel", channel.display, "--count", "\(postsPerProcess)", "--handle", "poster\(k)"])
        }
        // A fresh client counts what every poster's log (or the shared file) holds.
        let side = try PostBenchmark(work: work, processes: processes, postsPerProcess: postsPerProcess, runs: 1).runTogether(children) {
            var readerOptions = options(directory, "private-count")
            readerOptions.engine = engine
            let reader = try Container(url: containerURL, options: readerOptions)
            try reader.refreshPublicDatabase()
            return try reader.publicDatabase.countRecords(matching: Query(recordType: ChatSchema.messageType))
        }
        return (side.rate, side.missing)
    }

    // MARK: Delivery across two mounts

    /// A sender writes through one bindfs mount of a directory and a receiver polls through another:
    /// two FUSE mounts share no page cache, as two machines on one network filesystem would not.
    private func delivery(into report: inout Report) throws {
        let directory = work.appendingPathComponent("log-delivery")
        let mounts = BindMounts(root: directory)
        if let reason = mounts.unavailableReason() {
            report.notes.append("Log delivery across two bindfs mounts was not measured: \(reason).")
            return
        }
        try mounts.up()
        defer { mounts.down() }
        let setup = "bindfs mounts (attr_timeout=0, entry_timeout=0)"
        try deliveryRun(a: mounts.a, b: mounts.b, privateRoot: mounts.root, filesystem: "bindfs", setup: setup, into: &report)
        // Issue 18's crowd: many receivers polling one directory, through the sender's mount and through another.
        for (side, where_) in [(mounts.a, "onemount"), (mounts.b, "bindfs")] {
            try deliveryRun(a: mounts.a, b: side, privateRoot: mounts.root, filesystem: where_, setup: setup, receivers: crowd, into: &report)
        }
    }

    /// The same across two mounts of a GlusterFS volume on 127.0.0.1, with the client's default 1 s caches.
    private func glusterDelivery(into report: inout Report) throws {
        let volume = GlusterVolume(root: work.appendingPathComponent("log-delivery-gluster"))
        if let reason = volume.unavailableReason() {
            report.notes.append("Log delivery across two GlusterFS mounts was not measured: \(reason).")
            return
        }
        try volume.up()
        defer { volume.down() }
        // Private data on the local disk, as each host keeps its own.
        let privateRoot = work.appendingPathComponent("log-delivery-gluster-private")
        defer { try? FileManager.default.removeItem(at: privateRoot) }
        try deliveryRun(a: volume.a, b: volume.b, privateRoot: privateRoot, filesystem: "glusterfs",
                        setup: "mounts of one GlusterFS volume on 127.0.0.1 (default options)", into: &report)
    }

    /// Commits through mount `a`, received by `receivers` processes polling through `b` (which may be `a` itself).
    /// One receiver's figures keep their first ids; a crowd's carry its size, and its CPU per delivery.
    private func deliveryRun(a: URL, b: URL, privateRoot: URL, filesystem: String, setup: String, receivers: Int = 1,
                             into report: inout Report) throws {
        // A container of its own for each run, so that no receiver catches up with an earlier run's messages.
        let run = "delivery-\(filesystem)-\(receivers)"
        let containerA = a.appendingPathComponent("container-\(run)"), containerB = b.appendingPathComponent("container-\(run)")
        let sender = try Container(url: containerA, options: options(privateRoot, "private-sender"))
        let channel = try ChannelName("bench-delivery")
        _ = try ChatClient(container: sender, handle: "sender").createChannel(channel)
        let poll = 0.25
        let interval = 0.1
        let timeout = Double(deliveryMessages) * interval * 1.5 + 30
        let children = try (0..<receivers).map { k in
            try Child(["receive", "--container", containerB.path, "--private-data", privateRoot.appendingPathComponent("private-\(run)-\(k)").path,
                       "--engine", "log", "--expect", "\(deliveryMessages)", "--timeout", "\(timeout)"])
        }
        try startTogether(children, timeout: 120)
        for _ in 0..<deliveryMessages {
            usleep(UInt32(interval * Double.random(in: 0.5...1.5) * 1_000_000))
            _ = try sender.publicDatabase.save(Seeder.message(text: "t=\(Clock.realtime())", handle: "sender", in: channel))
        }
        var latencies: [Double] = []
        for child in children {
            _ = child.finish(timeout: timeout)
            latencies += child.values(for: "lat").compactMap(Double.init)
        }
        let measured = Distribution(latencies)
        let missing = deliveryMessages * receivers - latencies.count
        let through = b == a ? "the same mount" : "mount B"
        let cpu = DeliveryBenchmark.receiverCPU(children, messages: deliveryMessages)
        let note = "\(deliveryMessages) commits through mount A of two \(setup), \(receivers) receiver(s) polling through \(through) and watching logs/ as a client does (the writer's bell reaches only watchers on its own mount); \(missing) not seen; \(cpu.note)."
        let prefix = receivers == 1 ? "log.delivery.\(filesystem)" : "log.delivery.\(filesystem).\(receivers)"
        let crowd = "\(receivers) receivers, \(b == a ? "one bindfs mount" : "two \(filesystem) mounts")"
        let label = receivers == 1 ? "log delivery latency across two \(filesystem) mounts" : "log delivery latency, \(crowd)"
        // One receiver across two mounts: within a poll and a half. A crowd: issue 18's delivery figures.
        let rows: [(quantile: String, value: Double, target: Target?)] = receivers == 1
            ? [("p50", measured.p50, .atMost(poll * 1.5 * 1000, "ms")), ("p99", measured.p99, nil)]
            : [("p50", measured.p50, .atMost(20, "ms")), ("p99", measured.p99, .atMost(100, "ms"))]
        for (quantile, value, target) in rows {
            report.add(Figure(id: "\(prefix).\(quantile)", label: "\(label), \(quantile)",
                              value: value, unit: "ms", baseline: poll * 1000, baselineLabel: "poll interval", target: target,
                              distribution: measured, runs: latencies.count, note: quantile == "p50" ? note : nil))
        }
        if receivers > 1 {
            report.add(cpu.figure(id: "\(prefix).cpu", label: "CPU per delivered message, per receiver, \(crowd)",
                                  receivers: receivers))
            report.add(Figure(id: "\(prefix).lost", label: "log deliveries not seen, \(crowd)",
                              value: Double(missing), unit: "msgs", target: .atMost(0, "msgs"), runs: 1))
        }
    }
}

/// Two bindfs mounts of one directory, made and removed by the benchmark itself (as root).
struct BindMounts {
    let root: URL
    var shared: URL { root.appendingPathComponent("shared") }
    var a: URL { root.appendingPathComponent("mnt-a") }
    var b: URL { root.appendingPathComponent("mnt-b") }

    /// Why the mounts cannot be made here, or nil if they can.
    func unavailableReason() -> String? {
        guard geteuid() == 0 else { return "it needs root" }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/bindfs") else { return "bindfs is not installed" }
        guard access("/dev/fuse", R_OK | W_OK) == 0 else { return "/dev/fuse cannot be opened" }
        return nil
    }

    func up() throws {
        down()
        try? FileManager.default.removeItem(at: root)
        for directory in [shared, a, b] { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
        for mount in [a, b] {
            // Caching off, as a network filesystem's client may not see another machine's writes in its cache.
            // bindfs stays behind as a daemon; it must hold none of our descriptors, or waiting for it would never end.
            let detached = "for fd in /proc/$$/fd/*; do fd=${fd##*/}; if [ \"$fd\" -gt 2 ]; then eval \"exec $fd>&-\" 2>/dev/null; fi; done; exec \"$0\" \"$@\""
            guard run("/bin/bash", ["-c", detached, "/usr/bin/bindfs", "-o", "attr_timeout=0,entry_timeout=0", shared.path, mount.path]) == 0 else {
                down()
                throw BenchError("bindfs could not mount \(shared.path) at \(mount.path).")
            }
        }
    }

    func down() {
        for mount in [a, b] { _ = run("/bin/fusermount", ["-u", "-q", mount.path]) == 0 || run("/bin/umount", ["-l", mount.path]) == 0 }
        try? FileManager.default.removeItem(at: root)
    }

    private func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
