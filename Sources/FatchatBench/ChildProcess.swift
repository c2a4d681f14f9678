import Foundation
import Synchronization

/// A copy of this executable running one of its `child` modes, talking over pipes.
///
/// The child writes lines to standard output; a thread collects them so the
/// child never blocks on a full pipe. The parent releases a waiting child by
/// writing a line to its standard input (the start barrier).
final class Child: Sendable {
    let process: Process
    private let input: FileHandle
    private let lines = LineBuffer()
    private let finishedReading = DispatchSemaphore(value: 0)

    /// This executable, as the kernel sees it: running `/proc/self/exe` itself still works after a rebuild replaced the file.
    static var executablePath: String {
        FileManager.default.isExecutableFile(atPath: "/proc/self/exe") ? "/proc/self/exe" : CommandLine.arguments[0]
    }

    /// Starts `fatchat-bench child <arguments>`.
    convenience init(_ arguments: [String]) throws {
        try self.init(executable: Self.executablePath, ["child"] + arguments)
    }

    /// Starts any executable, with the same pipes.
    init(executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.standardError
        try process.run()
        self.process = process
        input = stdin.fileHandleForWriting
        let reader = stdout.fileHandleForReading
        let thread = Thread { [lines, finishedReading] in
            var pending = Data()
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    lines.append(line)
                }
            }
            finishedReading.signal()
        }
        thread.start()
    }

    var pid: Int32 { process.processIdentifier }

    /// Every line the child printed so far.
    var output: [String] { lines.all }

    /// Waits until the child printed a line equal to `line`; false on timeout or exit.
    func waitFor(line: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if output.contains(line) { return true }
            if !process.isRunning {
                // Its last lines may still be on their way from the pipe: wait for the reader to reach
                // the end (and leave the signal for `finish`), or a child that says "done" and exits at
                // once would count as failed.
                if finishedReading.wait(timeout: .now() + 5) == .success { finishedReading.signal() }
                return output.contains(line)
            }
            usleep(2_000)
        }
        return false
    }

    /// Writes one line to the child's standard input.
    func send(_ line: String) {
        try? input.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits for the child to exit and its output to be read; returns the exit status, or nil on timeout.
    func finish(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
            _ = finishedReading.wait(timeout: .now() + 2)
            return nil
        }
        _ = finishedReading.wait(timeout: .now() + 5)
        return process.terminationStatus
    }

    /// Lines of the form `KEY VALUE…`, the values after the key.
    func values(for key: String) -> [String] {
        output.compactMap { line in line.hasPrefix(key + " ") ? String(line.dropFirst(key.count + 1)) : nil }
    }
}

/// Lines shared between the reading thread and the parent.
final class LineBuffer: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// Starts children, waits for each to print `ready`, then releases them together.
func startTogether(_ children: [Child], timeout: Double) throws {
    for child in children where !child.waitFor(line: "ready", timeout: timeout) {
        throw BenchError("A child process (pid \(child.pid)) did not get ready within \(Int(timeout)) s; its output: \(child.output.suffix(5))")
    }
    for child in children { child.send("go") }
}

/// In a child: says `ready`, then blocks until the parent writes a line.
func waitForGo() {
    say("ready")
    _ = readLine()
}

/// Prints a line at once, so the parent sees it even if this process is killed next.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// CPU time (user + system) of a process in seconds, from /proc/PID/stat.
func cpuSeconds(pid: Int32) -> Double? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return nil }
    // Fields after the command name start at field 3 (state); utime and stime are fields 14 and 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return nil }
    return (utime + stime) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// In a child: the CPU time this process spends from now on, printed as `cpu SECONDS`.
struct CPUMeter {
    private let start = cpuSeconds(pid: getpid())

    func report() {
        guard let start, let now = cpuSeconds(pid: getpid()) else { return }
        say("cpu \(now - start)")
    }
}

/// VmRSS and VmHWM of a process (this one by default) in MB, from /proc/PID/status.
func memoryMB(pid: Int32 = getpid()) -> (rss: Double, hwm: Double) {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    return (kilobytes("VmRSS", in: status) / 1024, kilobytes("VmHWM", in: status) / 1024)
}

/// A process's proportional set size in MB, from /proc/PID/smaps_rollup: its resident pages, each shared one
/// divided by the processes sharing it. What a hundred clients of one binary cost each, where VmRSS counts
/// the shared libraries in full a hundred times.
func proportionalMB(pid: Int32) -> Double {
    kilobytes("Pss", in: (try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8)) ?? "") / 1024
}

/// The value of a `Key:   123 kB` line of a /proc file, or NaN.
private func kilobytes(_ key: String, in text: String) -> Double {
    let line = text.split(separator: "\n").first { $0.hasPrefix(key + ":") }
    return line.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Double($0) } ?? .nan
}

/// A benchmark could not run; the message says what to do.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
