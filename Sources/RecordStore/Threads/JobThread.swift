import Foundation
import Synchronization

/// A thread of this process's own that runs the jobs handed to it one at a time, each once it is due and
/// in the order they came among those due, and between them sleeps with no timer set.
///
/// Dispatch's queues would do the same work, but on Linux the first job any of Dispatch's worker threads
/// runs starts a timer that wakes the process once a second for as long as it lives (libdispatch watching
/// its pool of workers). Among a hundred idle clients those wake-ups were more than half of their CPU
/// (BENCHMARKS.md, twenty-second round), so a client does its background work on threads like this one.
///
/// The thread starts with the first job. Once its owner lets go of it, it runs every job still
/// waiting at once, due or not, and ends. A job that holds its owner keeps it, so such an owner's
/// delayed jobs run when due and the thread ends after the last of them.
public final class JobThread: Sendable {
    private let core: Core

    /// A thread that will carry `name` (at most 15 bytes are kept).
    public init(name: String) {
        core = Core(name: name)
    }

    deinit {
        core.close()
    }

    /// Hands `job` over, to run after the jobs before it and not before `delay` seconds from now.
    public func run(after delay: Double = 0, _ job: @escaping @Sendable () -> Void) {
        core.add(Job(due: Self.now() &+ UInt64(max(0, delay) * 1e9), body: job))
    }

    /// Whether the calling thread is this one, where waiting for a job of its own would never end.
    public var isCurrent: Bool {
        core.isCurrent
    }

    static func now() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    struct Job {
        var due: UInt64
        var body: @Sendable () -> Void
    }

    /// The jobs and the thread, which holds this and not the `JobThread`, so that an owner letting go ends it.
    private final class Core: Sendable {
        private struct State {
            var jobs: [Job] = []
            var started = false
            var closed = false
            var thread: pthread_t?
        }

        private let name: String
        private let state = Mutex(State())
        /// Signalled once for each job handed over, and once at close.
        private let wake = DispatchSemaphore(value: 0)

        init(name: String) {
            self.name = name
        }

        var isCurrent: Bool {
            state.withLock { $0.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        }

        func add(_ job: Job) {
            let start = state.withLock { state -> Bool in
                state.jobs.append(job)
                defer { state.started = true }
                return !state.started
            }
            if start {
                NamedThread.start(name) { [self] in
                    state.withLock { $0.thread = pthread_self() }
                    loop()
                }
            }
            wake.signal()
        }

        func close() {
            let running = state.withLock { state -> Bool in
                state.closed = true
                return state.started
            }
            if running { wake.signal() }
        }

        private enum Next {
            case job(@Sendable () -> Void)
            case wait(until: UInt64?)
            case end
        }

        private func loop() {
            while true {
                switch next() {
                case .job(let body):
                    body()
                case .wait(let due):
                    if let due {
                        _ = wake.wait(timeout: DispatchTime(uptimeNanoseconds: due))
                    } else {
                        wake.wait()
                    }
                case .end:
                    return
                }
            }
        }

        /// The first job in order that is due (every one, once closed), or how long to sleep.
        private func next() -> Next {
            state.withLock { state in
                let now = JobThread.now()
                if let index = state.jobs.firstIndex(where: { state.closed || $0.due <= now }) {
                    return .job(state.jobs.remove(at: index).body)
                }
                return state.closed ? .end : .wait(until: state.jobs.map(\.due).min())
            }
        }
    }
}
