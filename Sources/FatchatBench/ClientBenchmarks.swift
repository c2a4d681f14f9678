import FatchatCore
import Foundation

/// Start to first frame with resident memory, and idle CPU: a client process measured from outside.
struct ClientBenchmarks {
    let container: URL
    let work: URL

    /// Spawns the first-frame child `runs` times (after one warm-up), against a child that exits at once.
    func firstFrame(runs: Int, into report: inout Report) throws {
        let privateData = work.appendingPathComponent("private-frame").path
        var frames: [Double] = [], noops: [Double] = [], rss: [Double] = [], hwm: [Double] = [], running: [Double] = [], noopRSS: [Double] = []
        var breakdown = ""
        var enters: [Double] = [], renders: [Double] = []
        for run in -1..<runs {
            let spawned = Clock.realtime()
            let child = try Child(["first-frame", "--container", container.path, "--private-data", privateData])
            guard child.finish(timeout: 120) == 0, let frame = child.values(for: "frame").first.flatMap(UInt64.init) else {
                throw BenchError("The first-frame process failed; its output: \(child.output.suffix(3))")
            }
            let noopSpawned = Clock.realtime()
            let noop = try Child(["noop"])
            guard noop.finish(timeout: 60) == 0, let noopFrame = noop.values(for: "frame").first.flatMap(UInt64.init) else {
                throw BenchError("The no-op process failed; its output: \(noop.output.suffix(3))")
            }
            guard run >= 0 else { continue }  // The warm-up run creates the private database.
            frames.append(Double(frame - spawned) / 1e6)
            noops.append(Double(noopFrame - noopSpawned) / 1e6)
            let memory = child.values(for: "rss").first?.split(separator: " ").compactMap { Double($0) } ?? []
            rss.append(memory.first ?? .nan)
            hwm.append(memory.last ?? .nan)
            running.append(child.values(for: "running-rss").first?.split(separator: " ").first.flatMap { Double($0) } ?? .nan)
            noopRSS.append(noop.values(for: "rss").first?.split(separator: " ").first.flatMap { Double($0) } ?? .nan)
            breakdown = child.values(for: "breakdown").first ?? ""
            enters += child.values(for: "enter").first?.split(separator: " ").compactMap { Double($0) } ?? []
            renders += child.values(for: "render").first?.split(separator: " ").compactMap { Double($0) } ?? []
        }
        let seam = "The frame is ChatScreen's, rendered into the headless screen model (120×40)."
        report.add(Figure(id: "client.enterToScreen", label: "Enter to my own message on screen (p50)", value: median(enters), unit: "ms",
                          baseline: median(renders), baselineLabel: "rendering a frame alone", target: .atMost(16, "ms"),
                          distribution: Distribution(enters), runs: enters.count,
                          note: "Enter → outbox commit → the pending message in the rendered frame, headless, 20 messages per run."))
        report.add(Figure(id: "client.firstFrame", label: "start to first frame, rendered headless (p50)", value: median(frames), unit: "ms",
                          baseline: median(noops), baselineLabel: "exec + exit of this binary", target: .atMost(150, "ms"),
                          distribution: Distribution(frames), runs: runs,
                          note: "Spawn → container open, ChatClient, channel list, newest 50 of the first channel; warm page cache. Last run: \(breakdown). " + seam))
        report.add(Figure(id: "client.rss", label: "resident memory at first frame (VmRSS, p50)", value: median(rss), unit: "MB",
                          baseline: median(noopRSS), baselineLabel: "VmRSS of the no-op", target: .atMost(40, "MB"),
                          distribution: Distribution(rss), runs: runs,
                          note: "VmHWM at first frame p50 \(Report.format(median(hwm))) MB; VmRSS with the engine running 0.5 s later p50 \(Report.format(median(running))) MB."))
        report.add(Figure(id: "client.rssRunning", label: "resident memory, engine running (VmRSS, p50)", value: median(running), unit: "MB",
                          baseline: median(noopRSS), baselineLabel: "VmRSS of the no-op", target: .atMost(40, "MB"),
                          distribution: Distribution(running), runs: runs))
    }

    /// Measures a running client's CPU over `seconds`, beside a `sleep` process measured the same way at the same time.
    /// With `presence`, the client also ticks each second and writes its presence as the full-screen client does;
    /// its figure is reported beside the one without, measured just before.
    @discardableResult
    func idleCPU(seconds: Double, presence: Bool = false, without: Double? = nil, into report: inout Report) throws -> Double {
        let client = try Child(["idle", "--container", container.path, "--private-data", work.appendingPathComponent("private-idle").path]
                               + (presence ? ["--presence"] : []))
        let sleeper = try Child(executable: "/bin/sleep", ["\(Int(seconds) + 600)"])
        defer {
            kill(client.pid, SIGTERM)
            kill(sleeper.pid, SIGTERM)
            _ = client.finish(timeout: 10)
            _ = sleeper.finish(timeout: 10)
        }
        guard client.waitFor(line: "ready", timeout: 120) else {
            throw BenchError("The idle client did not start; its output: \(client.output.suffix(3))")
        }
        let settle = min(5, max(1, seconds / 10))
        usleep(UInt32(settle * 1_000_000))
        let windows = max(1, min(6, Int(seconds / 10)))
        var clientWindows: [Double] = []
        guard let clientStart = cpuSeconds(pid: client.pid), let sleepStart = cpuSeconds(pid: sleeper.pid) else {
            throw BenchError("Cannot read /proc/PID/stat of the idle processes.")
        }
        var last = clientStart
        let started = Clock.monotonic()
        for w in 1...windows {
            let until = started + UInt64(seconds * Double(w) / Double(windows) * 1e9)
            let now = Clock.monotonic()
            if until > now { usleep(UInt32((until - now) / 1000)) }
            let cpu = cpuSeconds(pid: client.pid) ?? last
            clientWindows.append((cpu - last) / (seconds / Double(windows)) * 100)
            last = cpu
        }
        let elapsed = Double(Clock.monotonic() - started) / 1e9
        let sleepEnd = cpuSeconds(pid: sleeper.pid) ?? sleepStart
        let clientPercent = (last - clientStart) / elapsed * 100
        let sleepPercent = (sleepEnd - sleepStart) / elapsed * 100
        let tick = 100 / Double(sysconf(Int32(_SC_CLK_TCK))) / elapsed
        if presence {
            report.add(Figure(id: "client.idleCPU.presence", label: "idle CPU of a running client with presence on, over \(Int(elapsed)) s",
                              value: clientPercent, unit: "% of a core", baseline: without ?? sleepPercent,
                              baselineLabel: without == nil ? "sleep(1)" : "the same client without presence", target: .atMost(0.1, "% of a core"),
                              distribution: Distribution(clientWindows), runs: windows,
                              note: "As client.idleCPU, plus a presence beacon (online at start, a tick when the heartbeat is due or 30 s passed, a heartbeat write every \(Int(Presence.heartbeat)) s) and the chat's events drained; sleep(1) used \(Report.format(sleepPercent)) %."))
            return clientPercent
        }
        report.add(Figure(id: "client.idleCPU", label: "idle CPU of a running client over \(Int(elapsed)) s", value: clientPercent, unit: "% of a core",
                          baseline: sleepPercent, baselineLabel: "sleep(1)", target: .atMost(0.1, "% of a core"),
                          distribution: Distribution(clientWindows), runs: windows,
                          note: "ChatClient with its SyncEngine started, on the seeded container, after \(Int(settle)) s to settle; utime+stime from /proc/PID/stat, whose tick is \(Report.format(tick)) % over this period. Window medians are in the distribution."))
        return clientPercent
    }
    /// CPU per presence heartbeat write, the write behind most of an idle crowd's CPU: a child publishes the same
    /// presence over and over as a quiet client's heartbeat does, and a second child upserts a row of the same size
    /// into a raw SQLite file, one transaction each, as the floor.
    func heartbeatWrites(rounds: Int, count: Int, into report: inout Report) throws {
        func perWrite(_ arguments: [String]) throws -> [Double] {
            let child = try Child(["heartbeats", "--container", container.path, "--private-data", work.appendingPathComponent("private-beat").path,
                                   "--rounds", "\(rounds)", "--count", "\(count)"] + arguments)
            guard child.waitFor(line: "done", timeout: 600), child.finish(timeout: 60) == 0 else {
                _ = child.finish(timeout: 1)
                throw BenchError("The heartbeat writer failed; its output: \(child.output.suffix(3))")
            }
            return child.values(for: "round").compactMap(Double.init).map { $0 / Double(count) * 1000 }
        }
        let raw = work.appendingPathComponent("raw-beat.sqlite")
        // The work directory is kept between runs: a log left beside a new file would be replayed into it.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: raw.path + suffix) }
        let floor = try perWrite(["--raw", raw.path])
        let writes = try perWrite([])
        report.add(Figure(id: "client.heartbeatWrite.cpu", label: "CPU per presence heartbeat write (p50 of \(rounds) rounds of \(count))",
                          value: median(writes), unit: "ms", baseline: median(floor), baselineLabel: "a row of the same size upserted by hand in raw SQLite",
                          distribution: Distribution(writes), runs: rounds,
                          note: "ChatClient.publishPresence with the same state each time (a quiet commit, signed, with its proof), waiting for each write, on the seeded container and alone on it. No target of its own: it is the part of client.crowd.idleCPU.presence.users that one client's own write costs, before the crowd's contention."))
    }

    /// `count` idle clients at once, each with private data of its own, as a hundred people on one machine would
    /// keep them: their CPU together over `seconds`, and each one's memory; then the same crowd with presence on,
    /// as full-screen clients run it; beside as many idle Swift processes that only wait on their input
    /// (`idle-floor`), measured the same way just after.
    func idleCrowd(clients count: Int, seconds: Double, presenceSeconds: Double, into report: inout Report) throws {
        let crowd = work.appendingPathComponent("idle-crowd")
        func start(presence: Bool) throws -> [Child] {
            try? FileManager.default.removeItem(at: crowd)
            return try (0..<count).map { k in
                try Child(["idle", "--container", container.path, "--private-data", crowd.appendingPathComponent("private-\(k)").path]
                          + (presence ? ["--presence"] : []))
            }
        }
        defer { try? FileManager.default.removeItem(at: crowd) }
        let clients = try start(presence: false)
        let used = try Self.cpuTogether(clients, seconds: seconds)
        let rss = clients.map { memoryMB(pid: $0.pid).rss }, pss = clients.map { proportionalMB(pid: $0.pid) }
        Self.end(clients)
        let present = try start(presence: true)
        let usedPresent = try Self.cpuTogether(present, seconds: presenceSeconds)
        Self.end(present)
        let asUsers = Result { try presenceAsUsers(clients: count, seconds: presenceSeconds) }
        let floors = try (0..<count).map { _ in try Child(["idle-floor"]) }
        let floor = try Self.cpuTogether(floors, seconds: seconds)
        let floorPSS = median(floors.map { proportionalMB(pid: $0.pid) })
        Self.end(floors)
        report.add(Figure(id: "client.crowd.idleCPU", label: "idle CPU of \(count) idle clients together over \(Int(used.elapsed)) s", value: used.percent,
                          unit: "% of a core", baseline: floor.percent, baselineLabel: "\(count) Swift processes that only wait",
                          target: .atMost(0.5, "% of a core"), runs: 1,
                          note: "\(count) processes, each a ChatClient with its SyncEngine started on the seeded container and private data of its own; utime+stime from /proc/PID/stat summed over all of them, after they had all started and settled. The baseline is as many Swift processes that only wait on their standard input: what the machine charges a process that does nothing."))
        report.add(Figure(id: "client.crowd.idleCPU.presence", label: "idle CPU of \(count) idle clients with presence on, together over \(Int(usedPresent.elapsed)) s",
                          value: usedPresent.percent, unit: "% of a core", baseline: used.percent, baselineLabel: "the same crowd without presence",
                          target: .atMost(0.5, "% of a core"), runs: 1,
                          note: "As client.crowd.idleCPU, each client also running presence as a quiet full-screen client with its member list hidden (the default) does: online at start, a tick when the heartbeat is due or 30 s passed, a heartbeat every \(Int(Presence.heartbeat)) s; others' presence is not followed. Over at least one heartbeat's period. The clients are one OS user's, so their heartbeats replace one record."))
        switch asUsers {
        case .success(let used):
            report.add(Figure(id: "client.crowd.idleCPU.presence.users",
                              label: "idle CPU of \(count) idle clients with presence on, each its own OS user, member lists hidden, together over \(Int(used.hidden.elapsed)) s",
                              value: used.hidden.percent, unit: "% of a core", baseline: usedPresent.percent, baselineLabel: "the same crowd as one OS user",
                              target: .atMost(0.5, "% of a core"), runs: 1,
                              note: "As client.crowd.idleCPU.presence, but each client runs as an OS user of its own (fcbench0, fcbench1, …, made for the run and removed after it) in a fresh container their group shares: each has a key and a presence record of its own and writes a heartbeat a minute, as on a real shared machine. A full-screen client follows others' presence only while its member list is shown; it is hidden here, as it is by default. Measured from \(Int(Presence.heartbeat) + 10) s after the last client was ready (1 s in a smoke run)."))
            report.add(Figure(id: "client.crowd.idleCPU.presence.users.memberList",
                              label: "idle CPU of \(count) idle clients with presence on, each its own OS user, member lists shown, together over \(Int(used.shown.elapsed)) s",
                              value: used.shown.percent, unit: "% of a core", baseline: used.hidden.percent, baselineLabel: "the same crowd with member lists hidden",
                              target: .atMost(0.5, "% of a core"), runs: 1,
                              note: "As client.crowd.idleCPU.presence.users, the same users and container just after, each client with its member list shown: it reads and checks every other's heartbeat as it comes. Measured once the first round of heartbeats is over, as there: by then each client has read every other's key and checked the signed statement of every other's heartbeat chain, which a crowd open all day does once a day."))
        case .failure(let error):
            report.notes.append("client.crowd.idleCPU.presence.users was not measured: \(error)")
        }
        report.add(Figure(id: "client.crowd.pss", label: "memory per idle client, \(count) running (PSS, p50)", value: median(pss), unit: "MB",
                          baseline: floorPSS, baselineLabel: "PSS of an idle-floor process", target: .atMost(20, "MB"), distribution: Distribution(pss), runs: count,
                          note: "Proportional set size from /proc/PID/smaps_rollup: a page shared by n processes counts 1/n in each, so the \(count) clients' figures add up to what they cost the machine together. VmRSS, which counts every shared page in full in every process, p50 \(Report.format(median(rss))) MB."))
        report.add(Figure(id: "client.crowd.rss", label: "resident memory per idle client, \(count) running (VmRSS, p50)", value: median(rss), unit: "MB",
                          distribution: Distribution(rss), runs: count))
    }

    /// The crowd with presence on, each client run as an OS user of its own (`UserCrowd`): with member lists
    /// hidden, then the same users with them shown.
    private func presenceAsUsers(clients count: Int, seconds: Double) throws
        -> (hidden: (percent: Double, elapsed: Double), shown: (percent: Double, elapsed: Double)) {
        if let unavailable = UserCrowd.unavailable { throw BenchError(unavailable) }
        let crowd = try UserCrowd(count: count, in: work.appendingPathComponent("idle-crowd-users"))
        defer { crowd.remove() }
        // Each new user's client publishes its key; with the member list shown, each client reads every other's
        // key and checks the signed statement of every other's chain, at the others' starts or, for those who
        // started before its feed did, at their first heartbeat. A crowd open all day does that once a day;
        // it is measured once the first round of heartbeats is over.
        let settle = seconds >= Presence.heartbeat ? Presence.heartbeat + 10 : 1
        func run(_ arguments: [String]) throws -> (percent: Double, elapsed: Double) {
            let clients = try crowd.start(["--presence"] + arguments)
            defer { Self.end(clients) }
            return try Self.cpuTogether(clients, seconds: seconds, settle: settle)
        }
        return (try run([]), try run(["--member-list"]))
    }

    /// Waits until every child is ready and has settled, then measures their CPU together over `seconds`.
    /// `settle`: seconds to wait after the last is ready, by default a tenth of `seconds`, from 1 to 5.
    private static func cpuTogether(_ children: [Child], seconds: Double, settle: Double? = nil) throws -> (percent: Double, elapsed: Double) {
        for child in children where !child.waitFor(line: "ready", timeout: 300) {
            end(children)
            throw BenchError("An idle process (pid \(child.pid)) did not start; its output: \(child.output.suffix(3))")
        }
        usleep(UInt32((settle ?? min(5, max(1, seconds / 10))) * 1_000_000))
        func together() -> Double { children.reduce(0) { $0 + (cpuSeconds(pid: $1.pid) ?? .nan) } }
        let start = together()
        let started = Clock.monotonic()
        usleep(UInt32(seconds * 1_000_000))
        let elapsed = Double(Clock.monotonic() - started) / 1e9
        return ((together() - start) / elapsed * 100, elapsed)
    }

    private static func end(_ children: [Child]) {
        for child in children { kill(child.pid, SIGTERM) }
        for child in children { _ = child.finish(timeout: 10) }
    }
}
