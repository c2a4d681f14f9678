import CNCurses
import FatchatCore
import Foundation

/// What woke the main loop.
public enum LoopEvent: Sendable, Equatable {
    /// Keys and pastes from the terminal (a resize arrives as ``Key/resize``).
    case input([InputEvent])
    /// The event descriptor (e.g. the sync engine's) is readable; drain it.
    case eventsReady
    /// A tick: each second while busy, and when something is due while quiet (see ``TickPace``); it comes even
    /// while messages keep arriving.
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
    /// Return from ``MainLoop/run(terminal:eventDescriptor:pace:handler:)``.
    case stop
}

/// The client's main loop: an ``EventLoop`` on the terminal, an event descriptor, a timer and the signals.
/// No busy loop; everything, ncurses included, runs on the calling thread.
public enum MainLoop {
    /// Runs until the handler says stop or a termination signal arrives, then restores the terminal.
    ///
    /// `eventDescriptor` is polled for reading when given; the handler must drain it. ``LoopEvent/tick``
    /// comes at `pace` (nil: no ticks), which the handler may set as it returns: every second while busy,
    /// and while quiet only when something is due, so that an idle client is not woken for nothing.
    public static func run(terminal: CursesTerminal, eventDescriptor: Int32?, pace: TickPace? = TickPace(),
                           handler: (LoopEvent, CursesTerminal) -> LoopControl) throws {
        defer { terminal.close() }
        try withoutActuallyEscaping(handler) { handler in
            let loop = try EventLoop()
            // The handlers the loop keeps must not keep it: `handler` may not outlive this call.
            unowned let stopper = loop
            var decoder = KeyDecoder()
            var callbackComing = false
            var ticker: Ticker?
            // The ticker's handler keeps `deliver`, which keeps the ticker: let go of both before `handler` must be.
            defer { ticker = nil }
            func deliver(_ event: LoopEvent) {
                defer { ticker?.retime() }
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
            ticker = pace.map { Ticker(loop: loop, pace: $0) { deliver(.tick) } }
            // Keys typed before the loop started are already buffered in curses.
            readInput()
            try loop.run()
        }
    }
}
