import Foundation
import Synchronization

/// A running helper process (one of the package's executables), its output collected as it arrives.
///
/// Standard output and standard error are drained by threads of their own, so
/// a worker never blocks on a full pipe, and what a killed worker had written
/// is still read after it died.
public final class WorkerProcess: Sendable {
    /// Something about running a worker went wrong; the message says what.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    public let name: String
    private let process: SpawnedProcess
    private let output: PipeCollector
    private let errors: PipeCollector

    /// A product binary built next to the test bundle; `$<NAME>_PATH` (upper-cased) overrides.
    public static func executable(_ product: String) throws -> URL {
        if let path = ProcessInfo.processInfo.environment[product.uppercased() + "_PATH"] {
            return URL(fileURLWithPath: path)
        }
        var directories: [URL] = []
        if let first = CommandLine.arguments.first {
            directories.append(URL(fileURLWithPath: first).deletingLastPathComponent())
        }
        directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
        directories.append(Bundle.main.bundleURL)
        let candidates = directories.map { $0.appendingPathComponent(product) }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw Failure(description: "The \(product) binary is not next to the test bundle (looked at \(candidates.map(\.path).joined(separator: ", "))). Build it with `swift build`, or set \(product.uppercased())_PATH to its path.")
        }
        return found
    }

    /// A standard input that holds `text` and then ends; for short inputs (a pipe holds 64 KB before a write blocks).
    public static func input(_ text: String) throws -> FileHandle {
        let ends = try closeOnExecPipe()
        let writer = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
        writer.write(Data(text.utf8))
        try writer.close()
        return FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
    }

    /// Starts `executable` with `arguments`, directly, or through `launcher` (e.g. `runuser -u USER --`).
    public init(_ name: String, executable: String = "StoreWorker", _ arguments: [String], launcher: [String] = [],
                environment: [String: String] = [:], input: FileHandle? = nil) throws {
        self.name = name
        let worker = try Self.executable(executable)
        let argv = launcher.isEmpty ? [worker.path] + arguments : launcher + [worker.path] + arguments
        let process = try SpawnedProcess(argv, environment: environment, stdin: input.map { .descriptor($0.fileDescriptor) } ?? .null,
                                         stdout: .pipe, stderr: .pipe)
        self.process = process
        output = PipeCollector(process.output)
        errors = PipeCollector(process.errors)
    }

    public var processIdentifier: Int32 { process.processIdentifier }

    /// The complete lines written to stdout so far.
    public var lines: [String] { output.lines }

    /// Everything written to stderr so far.
    public var errorText: String { errors.text }

    /// Waits until at least `count` lines arrived, the worker ended and its output was read, or the timeout passed.
    public func waitForLines(_ count: Int, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if output.lineCount >= count { return true }
            // An ended worker's last lines may still be in the pipe: done once it is read to its end.
            if !process.isRunning && output.isFinished { return output.lineCount >= count }
            try? await Task.sleep(for: .milliseconds(5))
        }
        // A task that woke late, past the deadline, looks once more before giving up.
        return output.lineCount >= count
    }

    /// Sends a signal to the worker.
    public func signal(_ signal: Int32) {
        process.signal(signal)
    }

    /// Waits for the worker to end and for its output to be read to the end.
    ///
    /// Past the timeout the worker is killed, and this throws.
    @discardableResult
    public func finish(timeout: Duration) async throws -> Termination {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                process.signal(SIGKILL)
                process.waitUntilExit()
                throw Failure(description: "\(name) was still running after \(timeout) and was killed. stderr: \(errorText)")
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        // The pipes reach end-of-file once every holder of their write ends is gone.
        while !(output.isFinished && errors.isFinished) {
            if ContinuousClock.now >= deadline + .seconds(10) {
                throw Failure(description: "\(name) ended, but its output pipes stayed open.")
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return Termination(status: process.terminationStatus, signaled: process.wasSignaled)
    }

    /// Kills the worker if it still runs; for cleanup on a failed test.
    public func killIfRunning() {
        if process.isRunning {
            process.signal(SIGKILL)
            process.waitUntilExit()
        }
    }

    /// How a worker ended.
    public struct Termination: Equatable, Sendable, CustomStringConvertible {
        public var status: Int32
        public var signaled: Bool
        public init(status: Int32, signaled: Bool) {
            self.status = status
            self.signaled = signaled
        }
        public var description: String { signaled ? "signal \(status)" : "exit \(status)" }
        public static let success = Termination(status: 0, signaled: false)
    }
}

/// Reads a pipe to its end on a thread of its own.
private final class PipeCollector: Sendable {
    private struct State {
        var data = Data()
        var finished = false
    }
    private let state = Mutex(State())

    /// `handle` is nil only for a stream that was not a pipe, which reads as ended at once.
    init(_ handle: FileHandle?) {
        guard let handle else {
            state.withLock { $0.finished = true }
            return
        }
        let fd = handle.fileDescriptor
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                state.withLock { $0.data.append(contentsOf: buffer[0..<count]) }
            }
            try? handle.close()
            state.withLock { $0.finished = true }
        }
        thread.start()
    }

    var isFinished: Bool { state.withLock { $0.finished } }

    var text: String { state.withLock { String(decoding: $0.data, as: UTF8.self) } }

    /// Complete lines only: a line counts once its newline arrived.
    public var lines: [String] {
        let text = self.text
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()  // after the last newline: empty, or a line still being written
        return lines
    }

    var lineCount: Int { state.withLock { $0.data.reduce(0) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 } } }
}
