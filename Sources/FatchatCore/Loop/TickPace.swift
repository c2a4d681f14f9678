import Foundation

/// How often a loop's ticks come: every `busy` while anything is under way; once the owner says it is
/// quiet, when it says the next tick is due, and at least every `longestQuiet`. The owner sets both after
/// each event, and its ``Ticker`` reads them.
///
/// A quiet client used to tick every 5 s, and each tick woke the process from its sleep: in a crowd of a
/// hundred idle clients that was a third of their CPU, for ticks that changed nothing (`BENCHMARKS.md`,
/// thirty-first round). It now ticks when something is due, its heartbeat once a minute, or after
/// `longestQuiet`, which bounds what no deadline names (a resize the terminal never signalled).
public final class TickPace {
    /// Set by the owner: nothing counts down, and nothing happened for a while.
    public var quiet = false
    /// While quiet, when the next tick has something to do (a heartbeat, someone going stale); nil for nothing
    /// before `longestQuiet`.
    public var due: Date?
    /// The tick's period while busy, and the shortest wait while quiet.
    public let busy: Duration
    /// The longest a quiet loop goes without a tick.
    public let longestQuiet: Duration

    public static let defaultLongestQuiet = Duration.seconds(30)

    public init(busy: Duration = .seconds(1), longestQuiet: Duration = defaultLongestQuiet) {
        self.busy = busy
        self.longestQuiet = max(busy, longestQuiet)
    }

    /// How long a quiet loop sleeps before its next tick, when that tick is `due` (nil: nothing is):
    /// until then, but no sooner than `busy` (an overdue tick does not spin) and no later than `longestQuiet`.
    public func quietWait(until due: Date?, now: Date = Date()) -> Duration {
        guard let due else { return longestQuiet }
        let wait = Duration.milliseconds(Int64(max(0, min(due.timeIntervalSince(now), 1e9) * 1000).rounded(.up)))
        return min(max(wait, busy), longestQuiet)
    }

    /// A tick timer: repeating while busy, or one tick at an instant while quiet.
    enum Timer: Equatable {
        case every(Duration)
        case once(at: ContinuousClock.Instant)
    }

    /// The timer a loop should run after an event, given the one it runs (nil: none); nil to keep that one.
    ///
    /// A quiet tick that comes sooner than needed serves; one that comes later is brought forward, never put
    /// off, so that a stream of events cannot hold ticks back.
    func retimed(_ running: Timer?, now: ContinuousClock.Instant, wallNow: Date = Date()) -> Timer? {
        guard quiet else { return running == .every(busy) ? nil : .every(busy) }
        let at = now.advanced(by: quietWait(until: due, now: wallNow))
        if case .once(let coming)? = running, coming <= at { return nil }
        return .once(at: at)
    }
}

/// Delivers ticks on an ``EventLoop`` at a ``TickPace``; the owner calls ``retime()`` after each event, and a tick
/// may set the pace too, as it is retimed after each.
public final class Ticker {
    private let pace: TickPace
    private unowned let loop: EventLoop
    private let tick: () throws -> Void
    private var running: (registration: EventLoop.Registration, timer: TickPace.Timer)?

    /// Starts ticking at `pace`, calling `tick` on the loop's thread; the loop must outlive the ticker.
    public init(loop: EventLoop, pace: TickPace, tick: @escaping () throws -> Void) {
        (self.loop, self.pace, self.tick) = (loop, pace, tick)
        retime()
    }

    /// Sets the timer to the pace the owner last asked for.
    public func retime() {
        guard let timer = pace.retimed(running?.timer, now: .now) else { return }
        if let running { loop.cancel(running.registration) }
        switch timer {
        case .every(let period):
            running = (loop.schedule(after: period, repeating: period) { [unowned self] in
                try tick()
                retime()
            }, timer)
        case .once(let at):
            running = (loop.schedule(after: ContinuousClock.now.duration(to: at)) { [unowned self] in
                running = nil
                try tick()
                retime()
            }, timer)
        }
    }
}
