import CNCurses
import FatchatCore
import Foundation

/// What woke the main loop.
public enum LoopEvent: Sendable, Equatable {
    /// Keys and pastes from the terminal (a resize arrives as ``Key/resize``).
    case input([InputEvent])
    /// The event descriptor (e.g. the sync engine's) is readable; drain it.
    case eventsReady
    /// A tick period passed (banner expiry, clock); it comes even while messages keep arriving.
    case tick
    /// SIGTERM, SIGHUP or SIGINT arrived; the loop ends after the handler returns.
    case terminate(signal: Int32)
    /// The time a handler asked for with ``LoopControl/callBack(after:)`` has passed.
    case callback
}

/// Whether the main loop goes on.
public enum LoopControl: Sendable {
    /// Wait for the next event.
    case proceed
    /// Wait for the next event, and deliver ``LoopEvent/callback`` once `delay` has passed,
    /// unless a callback asked for earlier is still to come (then that one serves).
    case callBack(after: Duration)
    /// Return from ``MainLoop/run(terminal:eventDescriptor:tickMilliseconds:handler:)``.
    case stop
}

/// How often ticks come: every `tickMilliseconds` while anything is under way; once the handler says it
/// is quiet, when it says the next tick is due, and at least every `quietTickMilliseconds`. The loop reads
/// both after each event.
public final class TickPace {
    /// Set by the handler: nothing on screen counts down, and nothing happened for a while.
    public var quiet = false
    /// While quiet, when the handler's next tick has something to do (a heartbeat, someone going stale);
    /// nil for nothing before the longest quiet wait.
    public var due: Date?

    public init() {}

    /// A tick timer: repeating while busy, or one tick at an instant while quiet.
    enum Timer: Equatable {
        case every(Duration)
        case once(at: ContinuousClock.Instant)
    }

    /// The timer the loop should run after an event, given the one it runs (nil: none); nil to keep that one.
    ///
    /// A quiet tick that comes sooner than needed serves; one that comes later is brought forward, never put
    /// off, so that a stream of events cannot hold ticks back.
    func retimed(_ running: Timer?, now: ContinuousClock.Instant, wallNow: Date = Date(), tickMilliseconds: Int32,
                 quietTickMilliseconds: Int32) -> Timer? {
        guard quiet else {
            let busy = Timer.every(.milliseconds(Int64(tickMilliseconds)))
            return running == busy ? nil : busy
        }
        let at = now.advanced(by: MainLoop.quietWait(until: due, now: wallNow, tickMilliseconds: tickMilliseconds,
                                                     quietTickMilliseconds: quietTickMilliseconds))
        if case .once(let coming)? = running, coming <= at { return nil }
        return .once(at: at)
    }
}

/// The client's main loop: an ``EventLoop`` on the terminal, an event descriptor, a timer and the signals.
/// No busy loop; everything, ncurses included, runs on the calling thread.
public enum MainLoop {
    /// The longest a quiet client goes without a tick: what bounds a resize the terminal never signalled.
    ///
    /// A quiet client used to tick every 5 s, and each tick woke the process from its sleep: in a crowd
    /// of a hundred idle clients that was a third of their CPU, for ticks that changed nothing. It now
    /// ticks when something is due (its heartbeat once a minute), or after this.
    public static let quietTickMilliseconds: Int32 = 30_000

    /// How long a quiet loop sleeps before its next tick, when the tick is `due` (nil: nothing is):
    /// until then, but no sooner than `tickMilliseconds` and no later than `quietTickMilliseconds`.
    public static func quietWait(until due: Date?, now: Date = Date(), tickMilliseconds: Int32 = 1000,
                                 quietTickMilliseconds: Int32 = quietTickMilliseconds) -> Duration {
        let longest = Double(max(quietTickMilliseconds, tickMilliseconds)) / 1000
        let seconds = min(max(due.map { $0.timeIntervalSince(now) } ?? longest, Double(tickMilliseconds) / 1000), longest)
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// Runs until the handler says stop or a termination signal arrives, then restores the terminal.
    ///
    /// `eventDescriptor` is polled for reading when given; the handler must drain it.
    /// `tickMilliseconds` is the period of ``LoopEvent/tick`` (-1: no ticks); while `pace` is quiet, a tick comes
    /// when `pace.due` says, at most `quietTickMilliseconds` apart, so that an idle client is not woken for nothing.
    public static func run(terminal: CursesTerminal, eventDescriptor: Int32?, tickMilliseconds: Int32 = 1000,
                           quietTickMilliseconds: Int32 = quietTickMilliseconds, pace: TickPace = TickPace(),
                           handler: (LoopEvent, CursesTerminal) -> LoopControl) throws {
        defer { terminal.close() }
        try withoutActuallyEscaping(handler) { handler in
            let loop = try EventLoop()
            // The handlers the loop keeps must not keep it: `handler` may not outlive this call.
            unowned let stopper = loop
            var decoder = KeyDecoder()
            var callbackComing = false
            var ticks: (registration: EventLoop.Registration, timer: TickPace.Timer)?
            /// Starts the ticks, or sets them to the pace the handler last asked for.
            func paceTicks() {
                guard tickMilliseconds >= 0,
                      let timer = pace.retimed(ticks?.timer, now: .now, tickMilliseconds: tickMilliseconds,
                                               quietTickMilliseconds: quietTickMilliseconds) else { return }
                if let ticks { stopper.cancel(ticks.registration) }
                switch timer {
                case .every(let period):
                    ticks = (stopper.schedule(after: period, repeating: period) { deliver(.tick) }, timer)
                case .once(let at):
                    ticks = (stopper.schedule(after: ContinuousClock.now.duration(to: at)) {
                        ticks = nil
                        deliver(.tick)
                    }, timer)
                }
            }
            func deliver(_ event: LoopEvent) {
                defer { paceTicks() }
                switch handler(event, terminal) {
                case .proceed: break
                case .stop: stopper.stop()
                case .callBack(let delay):
                    guard !callbackComing else { return }
                    callbackComing = true
                    stopper.schedule(after: delay) {
                        callbackComing = false
                        deliver(.callback)
                    }
                }
            }
            func readInput() {
                let events = decoder.decodeAll(terminal.readAvailable())
                // The terminal kept, cropped or scrolled what it showed at the old size, so
                // curses' copy of the screen is wrong: the next frame repaints everything.
                if events.contains(.key(.resize)) { terminal.invalidate() }
                if !events.isEmpty { deliver(.input(events)) }
            }
            func end(_ signal: Int32) {
                _ = handler(.terminate(signal: signal), terminal)
                stopper.stop()
            }
            let signals = try loop.receiveSignals { signal in
                // curses' own handler has queued KEY_RESIZE by the time the byte is here.
                if signal == SIGWINCH { readInput() } else { end(signal) }
            }
            _ = fatchat_route_signals(signals)
            defer { fatchat_unroute_signals() }
            if let eventDescriptor { loop.watch(eventDescriptor) { _ in deliver(.eventsReady) } }
            loop.watch(STDIN_FILENO) { readiness in
                readInput()
                // The terminal went away (its window closed, tmux killed). Reads would
                // never block again: leave rather than spin.
                if readiness.isHungUp { end(SIGHUP) }
            }
            paceTicks()
            // Keys typed before the loop started are already buffered in curses.
            readInput()
            try loop.run()
        }
    }
}
