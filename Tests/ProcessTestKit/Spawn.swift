import Foundation
import Synchronization

/// Runs a program, waits for it, and returns its standard output when `capturing`.
public func spawn(_ argv: [String], capturing: Bool) throws -> String {
    try spawnWaiting(argv, capturing: capturing).output
}

/// Runs a program and waits for it: its wait status, and its standard output when `capturing`.
/// Standard error goes to `errorPath` (created or truncated), else to /dev/null.
public func spawnWaiting(_ argv: [String], capturing: Bool, errorPath: String? = nil) throws -> (status: Int32, output: String) {
    let child = try SpawnedProcess(argv, stdout: capturing ? .pipe : .null, stderr: errorPath.map { .file($0) } ?? .null, resettingSignals: false)
    let output = child.output.map { String(decoding: $0.readDataToEndOfFile(), as: UTF8.self) } ?? ""
    try? child.output?.close()
    child.waitUntilExit()
    return (child.waitStatus ?? -1, output)
}

/// Where a spawned program's standard input, output or error goes.
public enum StandardStream: Sendable {
    /// /dev/null.
    case null
    /// A new pipe; the test's end is the process's `input`, `output` or `errors`.
    case pipe
    /// A file: read for input; created or truncated for output.
    case file(String)
    /// A descriptor the test holds open, duplicated into the program.
    case descriptor(Int32)
}

/// A program started with posix_spawn and reaped with waitpid.
///
/// The tests run hundreds of programs from many threads at once. Foundation's
/// `Process` ties each child to the run loop of the thread that started it,
/// and its manager thread touches that run loop's source after the child
/// exits, racing `waitUntilExit` on another thread; a pool thread that has
/// ended by then has freed it. It also once left an exited tmux client
/// unreaped, so that `waitUntilExit` never returned. Here nothing outlives
/// the call that made it but the pid: waiting is `waitid`, from any thread,
/// and the status is taken under a lock.
///
/// The program gets its three standard streams and no other descriptor, and
/// the test's ends of its pipes are close-on-exec, so that no other program
/// the tests start holds one open and keeps a reader from its end of file.
public final class SpawnedProcess: Sendable {
    public let processIdentifier: pid_t
    /// The write end of standard input, for `.pipe`.
    public let input: FileHandle?
    /// The read end of standard output, for `.pipe`.
    public let output: FileHandle?
    /// The read end of standard error, for `.pipe`.
    public let errors: FileHandle?
    /// The raw wait status once reaped; -1 when something else in the process reaped it.
    private let reaped = Mutex<Int32?>(nil)

    /// Starts `argv[0]` (a path) with the rest as its arguments, in the test's environment with `environment` laid over it.
    public init(_ argv: [String], environment: [String: String] = [:], stdin: StandardStream = .null,
                stdout: StandardStream = .null, stderr: StandardStream = .null, resettingSignals: Bool = true) throws {
        guard let program = argv.first else { throw SpawnError(call: "posix_spawn (no program)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The program's end of each pipe, closed here once it started.
        var theirs: [Int32] = []
        defer { theirs.forEach { close($0) } }
        var ours: [Int32: FileHandle] = [:]
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            case .descriptor(let fd):
                posix_spawn_file_actions_adddup2(&actions, fd, target)
            case .pipe:
                let ends = try closeOnExecPipe()
                let (mine, child) = target == 0 ? (ends[1], ends[0]) : (ends[0], ends[1])
                theirs.append(child)
                ours[target] = FileHandle(fileDescriptor: mine, closeOnDealloc: true)
                posix_spawn_file_actions_adddup2(&actions, child, target)
            }
        }
        // Nothing of the test process's but these three: a pipe another test holds open stays out
        // of a long-lived program started meanwhile (a tmux server, a PostgreSQL cluster).
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        // With `resettingSignals`, as Foundation's Process starts a program: no signal blocked, none
        // ignored. Without, the program keeps the calling thread's mask and ignored signals, as the
        // tmux servers of the terminal tests always did: given an empty mask, their panes' shells
        // no longer printed the program's exit status after a Ctrl-C or a SIGTERM ended it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if resettingSignals {
            var none = sigset_t(), all = sigset_t()
            sigemptyset(&none)
            sigfillset(&all)
            posix_spawnattr_setsigmask(&attributes, &none)
            posix_spawnattr_setsigdefault(&attributes, &all)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        }

        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        let cEnv: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (cArgs + cEnv).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, program, &actions, &attributes, cArgs, cEnv)
        guard result == 0 else { throw SpawnError(call: "posix_spawn \(program): \(String(cString: strerror(result)))") }
        processIdentifier = pid
        input = ours[0]
        output = ours[1]
        errors = ours[2]
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module does not declare.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    /// Reaps the program if it has ended, without waiting; its raw status once reaped.
    private func reap() -> Int32? {
        reaped.withLock { status in
            if status == nil {
                var raw: Int32 = 0
                let result = waitpid(processIdentifier, &raw, WNOHANG)
                if result == processIdentifier { status = raw } else if result < 0, errno == ECHILD { status = -1 }
            }
            return status
        }
    }

    public var isRunning: Bool { reap() == nil }

    /// Waits until the program ends and reaps it; from any thread, and from several at once.
    public func waitUntilExit() {
        while reap() == nil {
            // Waits without reaping, so the pid stays this program's until `reap` takes it under the lock.
            var info = siginfo_t()
            if waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) < 0, errno != EINTR, errno != ECHILD { return }
        }
    }

    /// The raw wait status, once reaped.
    public var waitStatus: Int32? { reaped.withLock { $0 } }

    /// Its exit code, or the signal that ended it (as Foundation's `terminationStatus`); -1 while it runs.
    public var terminationStatus: Int32 {
        guard let raw = waitStatus, raw >= 0 else { return -1 }
        return Self.signaled(raw) ? raw & 0x7f : (raw >> 8) & 0xff
    }

    /// Whether a signal ended it.
    public var wasSignaled: Bool { waitStatus.map { $0 >= 0 && Self.signaled($0) } ?? false }

    private static func signaled(_ raw: Int32) -> Bool { (raw & 0x7f) != 0 && (raw & 0x7f) != 0x7f }

    /// Sends `signal` unless the program was reaped (its pid may be another's by then).
    public func signal(_ signal: Int32) {
        reaped.withLock { status in
            if status == nil { kill(processIdentifier, signal) }
        }
    }
}

/// A pipe whose two ends a started program does not inherit: `[read, write]`.
/// (Swift's Glibc module has no `pipe2`; every program started here closes what it inherited anyway.)
public func closeOnExecPipe() throws -> [Int32] {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { throw SpawnError(call: "pipe") }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    return ends
}

/// A system call failed while starting a helper program.
public struct SpawnError: Error {
    public let call: String
}
