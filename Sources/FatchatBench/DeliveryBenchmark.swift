import FatchatCore
import Foundation
import RecordStore

/// From a commit in this process to the `recordsChanged` event in each receiving process.
///
/// The parent commits one message at a time straight to the public database,
/// its text carrying CLOCK_REALTIME in nanoseconds taken just before the
/// commit; each receiver prints now − sent. The baseline is the same hop over
/// a pipe, with no database: the floor of waking another process here.
struct DeliveryBenchmark {
    let work: URL
    let messages: Int
    let receiverCounts: [Int]

    func run(into report: inout Report) throws {
        let filesystem = MachineDescription.filesystem(of: work.path)
        let networkFS = ["nfs", "cifs", "smb", "fuse", "9p"].contains { filesystem.hasPrefix($0) }
        for mode in [JournalMode.local, .network] {
            for receivers in receiverCounts {
                let baseline = try pipeLatencies(receivers: receivers, interval: 0.02)
                let (latencies, lost, cpu) = try engineLatencies(mode: mode, receivers: receivers)
                let measured = Distribution(latencies), floor = Distribution(baseline)
                let where_ = mode == .local ? "local" : "network"
                var note = "\(messages) commits × \(receivers) receiver(s); \(lost) deliveries missing; each receiver used \(Report.format(cpu)) ms of CPU per message (whole run, start-up included)."
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
                report.add(Figure(id: "delivery.\(where_).\(receivers).lost", label: "deliveries not seen within \(Int(Double(messages) * (mode == .local ? 0.02 : 0.05) * 1.5 + 30)) s, \(where_), \(receivers) receiver(s)",
                                  value: Double(lost), unit: "msgs", target: .atMost(0, "msgs"), runs: 1))
            }
        }
    }

    private func engineLatencies(mode: JournalMode, receivers: Int) throws -> (latencies: [Double], lost: Int, cpuPerMessage: Double) {
        let directory = work.appendingPathComponent("delivery-\(mode.rawValue)-\(receivers)")
        try? FileManager.default.removeItem(at: directory)
        defer { try? FileManager.default.removeItem(at: directory) }
        let containerURL = directory.appendingPathComponent("container")
        let container = try Container(url: containerURL, options: Container.Options(mode: mode, privateDataDirectory: directory.appendingPathComponent("private-sender")))
        let channel = try ChannelName("bench-delivery")
        _ = try ChatClient(container: container, handle: "sender").createChannel(channel)
        let interval = mode == .local ? 0.02 : 0.05
        let timeout = Double(messages) * interval * 1.5 + 30
        let children = try (0..<receivers).map { k in
            try Child(["receive", "--container", containerURL.path, "--private-data", directory.appendingPathComponent("private-\(k)").path,
                       "--mode", mode.rawValue, "--expect", "\(messages)", "--timeout", "\(timeout)"]
                      + (mode == .network ? ["--no-inotify"] : []))
        }
        try startTogether(children, timeout: 60)
        for _ in 0..<messages {
            // Jitter the pace, so sends do not lock into step with the receivers' poll timers.
            usleep(UInt32(interval * Double.random(in: 0.5...1.5) * 1_000_000))
            let record = Seeder.message(text: "t=\(Clock.realtime())", handle: "sender", in: channel)
            _ = try container.publicDatabase.save(record)
        }
        let (latencies, lost) = collect(children, timeout: timeout)
        let cpu = children.compactMap { $0.values(for: "cpu").first.flatMap(Double.init) }
        return (latencies, lost, median(cpu) * 1000 / Double(messages))
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
