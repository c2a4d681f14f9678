import Foundation
import RecordStore
import Synchronization

/// Keeps a client in step with its container's public database.
///
/// It watches for commits by other processes (inotify, then `PRAGMA
/// data_version`, with a timer poll as the fallback and the only signal on a
/// network filesystem), fetches the change feed since its saved token, and
/// emits events, including notifications from its owner's subscriptions. Outgoing changes go to a durable outbox in the private
/// database first, then to the public database in batches, retried with
/// exponential backoff while the failure is transient. Only the engine's own
/// threads wait on the public database; a write that another process's lock
/// holds up for a second shows in the status as `waitingSince`.
public final class SyncEngine: Sendable {
    /// How the engine behaves.
    public struct Configuration: Sendable {
        /// How often to check without a wake-up; by default as `SyncEngine.defaultPollInterval` chooses.
        public var pollInterval: Double?
        /// How often the fetch loop looks at the bell between polls while a conversation goes on
        /// (`QuickLooks`); by default as `SyncEngine.defaultQuickLookInterval` chooses, and none for 0.
        public var quickLookInterval: Double?
        /// How often the sender looks in the outbox without being woken, for changes another process of this
        /// user queued there and left; this process's own changes wake it at once.
        public var outboxPollInterval = 30.0
        /// Use inotify for immediate wake-ups where the filesystem supports it.
        public var useInotify = true
        /// Names this client's saved position, so that two clients of one user do not share it.
        public var clientName = "default"
        /// Continue from the position this client saved last time; when false, start afresh.
        public var resumeFromSavedToken = true
        /// With no saved token, start from the beginning of the kept history rather than from now.
        public var startFromBeginning = false
        /// The first retry delay after a transient failure; it doubles up to `maximumBackoff`.
        public var initialBackoff = 0.05
        public var maximumBackoff = 5.0
        /// The formats that localized alerts are rendered with.
        public var alertStrings = AlertStrings()
        /// How long the position of a delivery may wait unsaved; what follows it is saved with it.
        /// A crash re-delivers at most these seconds of events, which delivery at least once allows;
        /// a stop saves at once.
        public var tokenSaveDelay = 5.0
        /// How long the owner's subscriptions are used before they are read again, to see those
        /// that another terminal of the same user saved or deleted.
        public var subscriptionRefresh = 5.0
        /// Record types whose changes are passing news that no one misses if it comes twice or late
        /// (the chat's presence heartbeats and typing notices). A batch of nothing else hurries
        /// nothing: its position waits to be saved up to `ephemeralTokenSaveDelay`, or until a batch
        /// of anything else or a stop saves it, and its changes meet the subscriptions as last read,
        /// without reading them again after `subscriptionRefresh`.
        public var ephemeralRecordTypes: Set<String> = []
        /// How long the position of a batch of ephemeral changes alone may wait unsaved. A crash
        /// re-delivers at most these seconds of them, and `tokenSaveDelay`'s of anything else.
        public var ephemeralTokenSaveDelay = 300.0
        /// Called when the saved token has expired, to refetch what the app needs.
        public var refetch: (@Sendable (RecordDatabase) throws -> [Record])?
        /// Fetch and send on the engine's own threads; when false, only `fetchOnce()` and `sendOnce()` do,
        /// so that a test steps the engine by hand and waits on what a pass emitted, not on time.
        public var automaticallySync = true

        public init() {}
    }

    public let container: Container
    let configuration: Configuration
    let events: EventQueue<SyncEvent>
    let outbox: Outbox
    let watcher: ChangeWatcher
    let sendWake: ChangeWatcher
    let pollInterval: Double
    let quickLookInterval: Double?
    let running = Atomic<Bool>(false)
    let loops = DispatchGroup()
    let lastStatus = Mutex<SyncStatus?>(nil)
    let fetchState = Mutex(FetchState())
    /// The record types whose changes the feed passes over (`passOver(recordTypes:)`).
    let passedOver = Mutex<Set<String>>([])
    /// Where fetching has got to; held for the whole of a pass, so passes never overlap.
    let fetchCursor = Mutex(FetchCursor())
    let idle = NSCondition()
    /// When the public write under way began; changed only while holding `writeWatch`.
    let publicWrite = Mutex<Date?>(nil)
    let writeWatch = NSCondition()
    /// The lasting failure (not busy, not away) that stopped the last batch; `nil` once a batch goes through.
    let stoppingFailure = Mutex<StoreError?>(nil)

    /// Prepares an engine; call `start()` to begin watching and sending.
    public init(container: Container, configuration: Configuration = Configuration()) throws {
        self.events = try EventQueue()
        self.container = container
        self.configuration = configuration
        self.outbox = try Outbox(database: container.privateDatabase)
        self.watcher = try ChangeWatcher(directory: container.bellDirectory, quietBell: container.quietBellName, useInotify: configuration.useInotify)
        self.sendWake = try ChangeWatcher(directory: container.url, useInotify: false)
        self.pollInterval = configuration.pollInterval ?? Self.defaultPollInterval(container, inotify: watcher.seesFilesystemEvents)
        self.quickLookInterval = configuration.quickLookInterval ?? Self.defaultQuickLookInterval(container)
    }

    /// How often the fetch loop looks without being woken.
    ///
    /// Where other machines commit (network mode, the log engine) nothing wakes
    /// it, so it looks four times a second. A local file is committed to only
    /// from this machine, so inotify sees every commit, and the timer is a
    /// safety net: once every 30 s, as each look is a read transaction, and a
    /// hundred idle clients looking once a second used 2.3 % of a core between
    /// them. Without inotify, and for PostgreSQL, whose notifications are not
    /// durable, it stays 1 s.
    static func defaultPollInterval(_ container: Container, inotify: Bool) -> Double {
        if container.mode == .network || container.engine == .log { return 0.25 }
        return container.engine == .sqlite && inotify ? 30 : 1
    }

    /// How often the fetch loop looks at the bell between polls while a conversation goes on.
    ///
    /// Only a `log` container on a network filesystem has writers whose bells this client cannot hear
    /// (on other machines or mounts) but can see, as `logs/`'s times: every 15 ms, one `fstat` each,
    /// so their messages come about 8 ms after the bell on average, not half a poll later. (20 ms gave
    /// one receiver 14 ms and 15 ms 11–13 ms, at no CPU per delivery that the bench could tell;
    /// BENCHMARKS.md, thirty-third round.)
    static func defaultQuickLookInterval(_ container: Container) -> Double? {
        container.engine == .log && container.mode == .network ? 0.015 : nil
    }

    // MARK: Lifecycle

    /// From the next fetch on, changes to records of `recordTypes` raise no event and meet no
    /// subscription, and the position moves past them: an app that shows none of a type (presence
    /// while no member list is on screen) does not pay to read each change to it. A type taken back
    /// brings only its later changes; read what is there now with a query.
    public func passOver(recordTypes: Set<String>) {
        passedOver.withLock { $0 = recordTypes }
    }

    /// Starts the fetch and send loops, and the watch on held-up writes, each on its own thread.
    ///
    /// With `automaticallySync` off, only the watch starts: fetching and sending wait for `fetchOnce()` and `sendOnce()`.
    ///
    /// Otherwise it returns once the fetch thread has fixed the position the feed is read from, so that
    /// whatever is committed after it returns is delivered; with no saved position that is the newest
    /// commit, read from the shared file. A file that cannot be read within ``positionWait`` (a lock, a
    /// server that is down) does not hold the caller longer: the position is then taken when it can be.
    public func start() {
        guard !running.exchange(true, ordering: .sequentiallyConsistent) else { return }
        let positioned = DispatchSemaphore(value: 0)
        let syncLoops: [(String, @Sendable () -> Void)] = configuration.automaticallySync
            ? [("fatchat.fetch", { @Sendable [self] in fetchLoop(positioned: positioned) }), ("fatchat.send", sendLoop)] : []
        for (name, loop) in syncLoops + [("fatchat.watch", watchLoop)] {
            loops.enter()
            NamedThread.start(name) { [loops] in
                Self.leaveSignalsToTheMainThread()
                loop()
                loops.leave()
            }
        }
        if configuration.automaticallySync { _ = positioned.wait(timeout: .now() + Self.positionWait) }
    }

    /// How long `start()` waits for the fetch thread to fix its starting position.
    static let positionWait = 0.5

    /// Blocks asynchronous signals on the engine's threads, so that SIGWINCH, SIGINT
    /// and SIGTERM interrupt the main thread's `poll()`, where the client handles them.
    private static func leaveSignalsToTheMainThread() {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    /// Stops the loops and finishes the event queue, waiting at most `timeout` seconds
    /// for them; returns whether they ended.
    ///
    /// A loop inside a write that another process's lock holds up is left to
    /// the process's exit: nothing it writes is lost, as the outbox keeps each
    /// change until the public database has it.
    @discardableResult
    public func stop(waitingAtMost timeout: Double = .infinity) -> Bool {
        guard running.exchange(false, ordering: .sequentiallyConsistent) else { return true }
        watcher.wake()
        sendWake.wake()
        writeWatch.lock()
        writeWatch.broadcast()
        writeWatch.unlock()
        let ended = timeout.isFinite ? loops.wait(timeout: .now() + timeout) == .success : { loops.wait(); return true }()
        events.finish()
        return ended
    }

    var isRunning: Bool { running.load(ordering: .sequentiallyConsistent) }

    /// How many times the fetch loop looked for others' commits without a bell having rung (a filesystem
    /// event, the trust in bells lapsing, or its timer): the looks that a commit ringing no bell can be
    /// found by. For tests that tell a woken client from one that happened to look.
    public var looksWithoutBell: Int { watcher.looksWithoutBell }

    // MARK: Events

    /// A descriptor that is readable while events are waiting; pass it to `poll()`.
    public var eventDescriptor: Int32 { events.descriptor }

    /// The next waiting event, or `nil` at once if none is waiting.
    public func nextEvent() -> SyncEvent? { events.pop() }

    func emit(_ event: SyncEvent) { events.push(event) }

    /// Tells the app of each damaged row this process skips, those skipped so far first, as
    /// ``SyncEvent/damagedRowSkipped(_:)`` events instead of on standard error: for an app
    /// that draws on the terminal, and so must show them itself, on its own thread.
    public func reportDamagedRows() {
        DamagedRowLog.report(replaying: true) { [weak self] line in self?.emit(.damagedRowSkipped(line)) }
        container.accountKeys?.report { [weak self] line in self?.emit(.keyChanged(line)) }
    }
}

/// Where fetching stands between passes: the position reached, and the record versions delivered lately.
struct FetchCursor: Sendable {
    /// Whether `token` was read from the saved one yet; that happens on the first pass.
    var started = false
    var token: ChangeToken?
    var delivered = DeliveredVersions()
}

/// What the fetch loop keeps between batches: the token not yet saved, and the cached subscriptions.
struct FetchState: Sendable {
    var unsaved: ChangeToken?
    /// When `unsaved` is to be saved: the soonest that any delivery it covers asked for.
    var unsavedDue: Date?
    var subscriptions: [Subscription] = []
    var subscriptionsLoaded: Date?

    /// Seconds from `now` until `unsaved` is due to be saved, 0 when it is due; `nil` when nothing waits.
    func tokenSaveDue(_ now: Date) -> Double? {
        guard unsaved != nil, let due = unsavedDue else { return nil }
        return max(0, due.timeIntervalSince(now))
    }
}
