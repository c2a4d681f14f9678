import Foundation

/// What the benchmark ran on: enough to compare figures between machines.
struct MachineDescription: Codable, Sendable {
    var cpuModel: String
    var cores: Int
    var memoryMB: Int
    var kernel: String
    var swiftVersion: String
    var containerFilesystem: String
    var containerPath: String
    /// /proc/loadavg when the run started: other work on the machine skews every figure.
    var loadAverage: String

    /// Reads /proc, uname and statfs; `swift --version` only if it answers quickly.
    static func current(containerPath: String) -> MachineDescription {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let meminfo = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        let totalKB = meminfo.split(separator: "\n").first { $0.hasPrefix("MemTotal:") }
            .flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) } ?? 0
        var names = utsname()
        uname(&names)
        let release = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return MachineDescription(
            cpuModel: model, cores: ProcessInfo.processInfo.activeProcessorCount, memoryMB: totalKB / 1024,
            kernel: "Linux " + release, swiftVersion: swiftVersion(),
            containerFilesystem: filesystem(of: containerPath), containerPath: containerPath, loadAverage: loadAverage())
    }

    /// One line per fact, for the printed report.
    var lines: [String] {
        ["CPU: \(cpuModel), \(cores) cores", "Memory: \(memoryMB) MB", "Kernel: \(kernel)",
         "Swift: \(swiftVersion)", "Container: \(containerPath) on \(containerFilesystem)",
         "Load average at start (1, 5, 15 min): \(loadAverage)"]
    }

    /// The 1-, 5- and 15-minute load averages, from /proc/loadavg.
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    private static func swiftVersion() -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "--version"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "unknown" }
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning {
            process.terminate()
            return "unknown (swift --version took over 5 s)"
        }
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return text.split(separator: "\n").first.map(String.init) ?? "unknown"
    }

    /// The filesystem type of the mount that holds `path`, from /proc/self/mounts (longest matching mount point).
    static func filesystem(of path: String) -> String {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
        var best: (point: String, type: String)?
        for line in mounts.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count >= 3 else { continue }
            let point = String(parts[1]).replacingOccurrences(of: "\\040", with: " ")
            let inside = resolved == point || resolved.hasPrefix(point == "/" ? "/" : point + "/")
            if inside, point.count >= (best?.point.count ?? -1) { best = (point, String(parts[2])) }
        }
        return best.map { "\($0.type) (mounted at \($0.point))" } ?? "unknown"
    }
}
