import FatchatCore
import Foundation
import RecordStore
import Synchronization

/// From a commit in this process to the `recordsChanged` event in each receiving process.
///
/// The parent commits one message at a time straight to the public database,
/// its text carrying CLOCK_REALTIME in nanoseconds taken just before the
/// commit; each receiver prints now − sent. The baseline is the same hop over
/// a pipe, with no database: the floor of waking another process here.
struct DeliveryBenchmark {
    let work: URL
    let messages: Int
    /// The sender's average pace, locally and through PostgreSQL; network mode never goes faster than 20 a second.
    let perSecond: Double
    let receiverCounts: [Int]
    /// A database for the `postgresql` rows, erased before each configuration; nil leaves them out.
    var postgresURL: String? = nil
    var postgresReceiverCounts: [Int] = []

    func run(into report: inout Report) throws {
        let filesystem = MachineDescription.filesystem(of: work.path)
        let networkFS = ["nfs", "cifs", "smb", "fuse", "9p"].contains { filesystem.hasPrefix($0) }
        for mode in [JournalMode.local, .network] {
            for receivers in receiverCounts {
                let baseline = try pipeLatencies(receivers: receivers, interval: 1 / perSecond)
                let (latencies, lost, cpu, commits) = try engineLatencies(mode: mode, receivers: receivers)
                let measured = Distribution(latencies), floor = Distribution(baseline)
                let where_ = mode == .local ? "local" : "network"
                var note = "\(messages) commits, \(Self.pace(interval(mode))), × \(receivers) receiver(s); \(lost) deliveries missing; \(cpu.note)."
                if mode == .network {
                    note += networkFS ? " Network mode on \(filesystem)." : " Network mode (rollback journal, dotfile locks, reopen per transaction) on a local \(filesystem) directory, as no network filesystem was mounted; receivers poll every 250 ms with inotify off, as they must where other machines commit."
                }
                for (quantile, value, base, limit) in [("p50", measured.p50, floor.p50, 5.0), ("p99", measured.p99, floor.p99, 25.0)] {
                    report.add(Figure(id: "delivery.\(where_).\(receivers).\(quantile)",
                                      label: "delivery latency, \(where_), \(receivers) receiver(s), \(quantile)",
                                      value: value, unit: "ms", baseline: base, baselineLabel: "pipe wake-up",
                                      target: mode == .local ? .atMost(limit, "ms") : nil,
                                      distribution: measured, runs: latencies.count, note: quantile == "p50" ? note : nil))
                }
                if mode == .local, receivers == receiverCounts.first {
                    try compareWithChatter(receivers: receivers, without: measured, into: &report)
                }
                report.add(Self.commitFigure(commits, id: "delivery.\(where_).\(receivers).commit", where: where_, receivers: receivers))
                report.add(cpu.figure(id: "delivery.\(where_).\(receivers).cpu", label: "CPU per delivered message, per receiver, \(where_), \(receivers) receiver(s)",
                                      receivers: receivers, target: mode == .local ? 0.1 : nil))
                report.add(Figure(id: "delivery.\(where_).\(receivers).lost", label: "deliveries not seen within \(Int(Double(messages) * interval(mode) * 1.5 + 30)) s, \(where_), \(receivers) receiver(s)",
                                  value: Double(lost), unit: "msgs", target: .atMost(0, "msgs"), runs: 1))
            }
        }
        if let postgresURL { try runOnServer(postgresURL, into: &report) }
    }

    /// The same hop through PostgreSQL: the commit's `NOTIFY` wakes each receiver's `LISTEN`, which fetches.
    private func runOnServer(_ url: String, into report: inout Report) throws {
        for receivers in postgresReceiverCounts {
            let baseline = try pipeLatencies(receivers: receivers, interval: 1 / perSecond)
            let (latencies, lost, cpu, commits) = try engineLatencies(mode: .local, receivers: receivers, postgresURL: url)
            let measured = Distribution(latencies), floor = Distribution(baseline)
            let note = "\(messages) commits, \(Self.pace(interval(.local))), × \(receivers) receiver(s) through PostgreSQL (\(url)), LISTEN/NOTIFY then a fetch from the token; \(lost) deliveries missing; \(cpu.note). Each receiver holds one connection, which listens and fetches."
            for (quantile, value, base, limit) in [("p50", measured.p50, floor.p50, 5.0), ("p99", measured.p99, floor.p99, 25.0)] {
                report.add(Figure(id: "delivery.postgresql.\(receivers).\(quantile)",
                                  label: "delivery latency, postgresql, \(receivers) receiver(s), \(quantile)",
                                  value: value, unit: "ms", baseline: base, baselineLabel: "pipe wake-up", target: .atMost(limit, "ms"),
                                  distribution: measured, runs: latencies.count, note: quantile == "p50" ? note : nil))
            }
            report.add(Self.commitFigure(commits, id: "delivery.postgresql.\(receivers).commit", where: "postgresql", receivers: receivers))
            report.add(cpu.figure(id: "delivery.postgresql.\(receivers).cpu", label: "CPU per delivered message, per receiver, postgresql, \(receivers) receiver(s)",
                                  receivers: receivers))
            report.add(Figure(id: "delivery.postgresql.\(receivers).lost", label: "deliveries not seen, postgresql, \(receivers) receiver(s)",
                              value: Double(lost), unit: "msgs", target: .atMost(0, "msgs"), runs: 1))
        }
    }

    /// Typists and heartbeats at work while messages are delivered: 8 accounts' typing notices,
    /// each every 3 s (the most a client writes), and their presence once a minute each.
    static let typists = 8

    /// Delivery again with typing and presence records being written the whole time, against the run without, in this run.
    private func compareWithChatter(receivers: Int, without: Distribution, into report: inout Report) throws {
        let (latencies, lost, _, _) = try engineLatencies(mode: .local, receivers: receivers, chatter: true)
        let with = Distribution(latencies)
        let note = "\(Self.typists) typists each writing a Typing record every 3 s and a Presence record every 60 s (records of their own, overwritten) during the \(messages) commits; \(lost) deliveries missing. Baseline: the run just before without them."
        for (quantile, value, base) in [("p50", with.p50, without.p50), ("p99", with.p99, without.p99)] {
            report.add(Figure(id: "delivery.typing.\(receivers).\(quantile)",
                              label: "delivery latency with typing and presence active, local, \(receivers) receiver(s), \(quantile)",
                              value: value, unit: "ms", baseline: base, baselineLabel: "without them",
                              target: .atMost(quantile == "p50" ? 5 : 25, "ms"), distribution: with, runs: latencies.count,
                              note: quantile == "p50" ? note : nil))
        }
        report.add(Figure(id: "delivery.typing.\(receivers).ratio", label: "delivery p50 with typing and presence ÷ without, same run",
                          value: without.p50 > 0 ? with.p50 / without.p50 : 0, unit: "×", runs: 1))
    }

    /// Seconds between the sender's commits, on average (each wait is jittered by ±50 %).
    private func interval(_ mode: JournalMode) -> Double {
        mode == .local ? 1 / perSecond : max(0.05, 1 / perSecond)
    }

    static func pace(_ interval: Double) -> String {
        "\(Int((1 / interval).rounded())) a second"
    }

    /// Each message's latency in every receiver, the deliveries missing, the receivers' CPU, and how long
    /// each of the sender's saves took (ms): the part of a latency spent before anyone could be told.
    private func engineLatencies(mode: JournalMode, receivers: Int, chatter: Bool = false, postgresURL: String? = nil)
        throws -> (latencies: [Double], lost: Int, cpu: ReceiverCPU, commits: [Double]) {
        let directory = work.appendingPathComponent("delivery-\(postgresURL == nil ? mode.rawValue : "postgresql")-\(receivers)\(chatter ? "-chatter" : "")")
        try? FileManager.default.removeItem(at: directory)
        defer { try? FileManager.default.removeItem(at: directory) }
        let containerURL = directory.appendingPathComponent("container")
        let container = try BenchContainer.make(at: containerURL, privateData: directory.appendingPathComponent("private-sender"),
                                                mode: mode, postgresURL: postgresURL)
        let channel = try ChannelName("bench-delivery")
        _ = try ChatClient(container: container, handle: "sender").createChannel(channel)
        let interval = interval(mode)
        let timeout = Double(messages) * interval * 1.5 + 30
        let children = try (0..<receivers).map { k in
            try Child(["receive", "--container", containerURL.path, "--private-data", directory.appendingPathComponent("private-\(k)").path,
                       "--mode", mode.rawValue, "--expect", "\(messages)", "--timeout", "\(timeout)"]
                      + (mode == .network ? ["--no-inotify"] : []))
        }
        try startTogether(children, timeout: 60)
        let chatterDone = StopFlag()
        let chatterThread = chatter ? Self.startChatter(container, until: chatterDone) : nil
        defer {
            chatterDone.flag.store(true, ordering: .sequentiallyConsistent)
            chatterThread?.wait()
        }
        var commits: [Double] = []
        for _ in 0..<messages {
            // Jitter the pace, so sends do not lock into step with the receivers' poll timers.
            usleep(UInt32(interval * Double.random(in: 0.5...1.5) * 1_000_000))
            let sent = Clock.realtime()
            let record = Seeder.message(text: "t=\(sent)", handle: "sender", in: channel)
            _ = try container.publicDatabase.save(record)
            commits.append(Double(Clock.realtime() &- sent) / 1e6)
        }
        let (latencies, lost) = collect(children, timeout: timeout)
        return (latencies, lost, Self.receiverCPU(children, messages: messages), commits)
    }

    /// The sender's saves alone, from the time a message carries to the return of its commit: how much
    /// of a delivery's latency passed before a receiver could hear of it.
    private static func commitFigure(_ commits: [Double], id: String, where place: String, receivers: Int) -> Figure {
        let measured = Distribution(commits)
        return Figure(id: id, label: "the sender's save alone (part of the latency above), \(place), \(receivers) receiver(s), p50",
                      value: measured.p50, unit: "ms", distribution: measured, runs: commits.count,
                      note: "From the send time the message carries to the return of its save; p99 \(Report.format(measured.p99)) ms.")
    }

    /// Each receiver's CPU from its first fetch (when it said `ready`) to its last delivery, per message; the median over receivers.
    /// Start-up is left out: it is paid once, not per message.
    static func receiverCPU(_ children: [Child], messages: Int) -> ReceiverCPU {
        func seconds(_ child: Child, _ key: String) -> Double? { child.values(for: key).first.flatMap(Double.init) }
        let delivering = children.compactMap { child in seconds(child, "cpu").flatMap { end in seconds(child, "cpu-ready").map { end - $0 } } }
        let starting = children.compactMap { seconds($0, "cpu-ready") }
        return ReceiverCPU(perMessage: median(delivering) * 1000 / Double(max(1, messages)), startUp: median(starting) * 1000)
    }

    /// A thread that writes the typists' records until `done`, as their clients would.
    private static func startChatter(_ container: Container, until done: StopFlag) -> DispatchGroup {
        let group = DispatchGroup()
        group.enter()
        let thread = Thread {
            defer { group.leave() }
            var next = 0
            let start = Date()
            while !done.flag.load(ordering: .sequentiallyConsistent) {
                usleep(UInt32(3.0 / Double(typists) * Double.random(in: 0.5...1.5) * 1_000_000))
                let k = next % typists
                next += 1
                var typing = RecordStore.Record(recordType: "Typing", recordID: RecordID(recordName: "typing.bench-\(k)"))
                typing["channel"] = .string("bench-delivery")
                typing["handle"] = .string("typist\(k)")
                typing["at"] = .date(Date())
                var batch = [typing]
                if next % (typists * 20) < typists || Date().timeIntervalSince(start) < 1 {
                    var presence = RecordStore.Record(recordType: "Presence", recordID: RecordID(recordName: "presence.bench-\(k)"))
                    presence["state"] = .string("online")
                    presence["seen"] = .date(Date())
                    batch.append(presence)
                }
                _ = try? container.publicDatabase.modifyRecords(saving: batch, deleting: [], savePolicy: .allKeys)
            }
        }
        thread.start()
        return group
    }

    private func pipeLatencies(receivers: Int, interval: Double) throws -> [Double] {
        let children = try (0..<receivers).map { _ in try Child(["pipe-echo", "--expect", "\(messages)"]) }
        try startTogether(children, timeout: 60)
        for _ in 0..<messages {
            usleep(UInt32(interval * Double.random(in: 0.5...1.5) * 1_000_000))
            let line = "t=\(Clock.realtime())"
            for child in children { child.send(line) }
        }
        return collect(children, timeout: 30).latencies
    }

    private func collect(_ children: [Child], timeout: Double) -> (latencies: [Double], lost: Int) {
        var latencies: [Double] = []
        var lost = 0
        for child in children {
            _ = child.finish(timeout: timeout)
            let values = child.values(for: "lat").compactMap(Double.init)
            latencies += values
            lost += messages - values.count
        }
        return (latencies, lost)
    }
}

/// Set once a helper thread should stop; a class, as an atomic cannot be copied into a thread's closure.
final class StopFlag: Sendable {
    let flag = Atomic<Bool>(false)
}

/// What a receiving process spent: per delivered message, and once to start.
struct ReceiverCPU {
    /// Milliseconds of CPU per message, start-up left out.
    var perMessage: Double
    /// Milliseconds of CPU until its first fetch was done.
    var startUp: Double

    var note: String {
        "each receiver used \(Report.format(perMessage)) ms of CPU per message after its start-up, which took \(Report.format(startUp)) ms of CPU"
    }

    /// The figure issue 18 asks to print: CPU per delivered message, per receiver.
    func figure(id: String, label: String, receivers: Int, target: Double? = nil) -> Figure {
        Figure(id: id, label: label, value: perMessage, unit: "ms",
               target: target.map { .atMost($0, "ms") }, runs: receivers,
               note: "Median over \(receivers) receiver(s) of each one's utime+stime from its first fetch to its last delivery, divided by the messages; start-up (median \(Report.format(startUp)) ms) left out.")
    }
}
