import Foundation
import Synchronization

/// Starts helper programs (a browser, a notification hook) without a shell and without waiting:
/// `posix_spawnp` with an argument array, stdin, stdout and stderr on `/dev/null` so nothing
/// scribbles on the client's screen, a session of their own so the terminal's signals
/// never reach them, and default signal handling and an empty signal mask.
///
/// Children are reaped without blocking by ``reap(now:)``, which the client's and the bot's
/// ticks call; one that outlives its time limit is sent SIGTERM, then SIGKILL.
public final class DetachedProcesses: Sendable {
    /// Why a helper did not start.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    private struct Child {
        var pid: pid_t
        var started: Date
        var limit: TimeInterval?
        var terminated = false
    }
    private let children = Mutex<[Child]>([])

    public init() {}

    /// How many helpers started here still run (not yet reaped).
    public var running: Int { children.withLock { $0.count } }

    /// Starts `argv` (the program looked up in `PATH` unless it has a `/`), detached;
    /// `limit` is how long it may run before it is stopped (`nil`: as long as it likes).
    @discardableResult
    public func start(_ argv: [String], limit: TimeInterval? = nil, now: Date = Date()) throws(Failure) -> pid_t {
        guard let program = argv.first, !program.isEmpty else { throw Failure(description: "No program to run.") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGWINCH, SIGCHLD, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        // POSIX_SPAWN_SETSID (0x80 in glibc) is a macro Swift does not import.
        let setSID: Int32 = 0x80
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | setSID))
        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, program, &actions, &attributes, cArgs, environ)
        guard result == 0 else {
            throw Failure(description: "Could not start \(program): \(String(cString: strerror(result))).")
        }
        children.withLock { $0.append(Child(pid: pid, started: now, limit: limit)) }
        return pid
    }

    /// Reaps the helpers that ended, and stops those past their limit; never blocks.
    public func reap(now: Date = Date()) {
        children.withLock { children in
            children.removeAll { child in
                var status: Int32 = 0
                let result = waitpid(child.pid, &status, WNOHANG)
                return result == child.pid || (result < 0 && errno == ECHILD)
            }
            for index in children.indices {
                guard let limit = children[index].limit, now.timeIntervalSince(children[index].started) > limit else { continue }
                // Our own child, by its pid, which stays ours until it is reaped.
                _ = kill(children[index].pid, children[index].terminated ? SIGKILL : SIGTERM)
                children[index].terminated = true
            }
        }
    }
}
