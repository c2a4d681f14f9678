import CNCurses
import Foundation

/// What woke the main loop.
public enum LoopEvent: Sendable, Equatable {
    /// Keys and pastes from the terminal (a resize arrives as ``Key/resize``).
    case input([InputEvent])
    /// The event descriptor (e.g. the sync engine's) is readable; drain it.
    case eventsReady
    /// The timeout passed with nothing else to do (banner expiry, clock).
    case tick
    /// SIGTERM, SIGHUP or SIGINT arrived; the loop ends after the handler returns.
    case terminate(signal: Int32)
}

/// Whether the main loop goes on.
public enum LoopControl: Sendable {
    /// Wait for the next event.
    case proceed
    /// Return from ``MainLoop/run(terminal:eventDescriptor:tickMilliseconds:handler:)``.
    case stop
}

/// The client's main loop: `poll()` on the terminal, an event descriptor and a signal pipe.
/// No busy loop; everything, ncurses included, runs on the calling thread.
public enum MainLoop {
    /// Runs until the handler says stop or a termination signal arrives, then restores the terminal.
    ///
    /// `eventDescriptor` is polled for reading when given; the handler must drain it.
    /// `tickMilliseconds` bounds each wait (-1: wait for input only).
    public static func run(terminal: CursesTerminal, eventDescriptor: Int32?, tickMilliseconds: Int32 = 1000,
                           handler: (LoopEvent, CursesTerminal) -> LoopControl) throws {
        var signalPipe: [Int32] = [-1, -1]
        guard pipe(&signalPipe) == 0 else { throw TerminalError.system("pipe", errno) }
        for fd in signalPipe { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        _ = fatchat_route_signals(signalPipe[1])
        defer {
            fatchat_unroute_signals()
            _ = Glibc.close(signalPipe[0])
            _ = Glibc.close(signalPipe[1])
            terminal.close()
        }
        var decoder = KeyDecoder()
        var fds = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: signalPipe[0], events: Int16(POLLIN), revents: 0)]
        if let eventDescriptor { fds.append(pollfd(fd: eventDescriptor, events: Int16(POLLIN), revents: 0)) }

        // Keys typed before the loop started are already buffered in curses.
        var pendingInput = true
        while true {
            if pendingInput {
                let events = decoder.decodeAll(terminal.readAvailable())
                if !events.isEmpty, handler(.input(events), terminal) == .stop { return }
                pendingInput = false
            }
            for index in fds.indices { fds[index].revents = 0 }
            let ready = poll(&fds, nfds_t(fds.count), tickMilliseconds)
            if ready < 0 {
                // EINTR: SIGWINCH, whose curses handler queued KEY_RESIZE.
                if errno == EINTR { pendingInput = true; continue }
                throw TerminalError.system("poll", errno)
            }
            if ready == 0 {
                if handler(.tick, terminal) == .stop { return }
                continue
            }
            if fds[1].revents != 0 {
                var byte: UInt8 = 0
                _ = read(signalPipe[0], &byte, 1)
                _ = handler(.terminate(signal: Int32(byte)), terminal)
                return
            }
            if fds.count > 2, fds[2].revents != 0, handler(.eventsReady, terminal) == .stop { return }
            if fds[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                // The terminal went away (its window closed, tmux killed). POLLIN
                // may come with POLLHUP, but reads would never block again: leave
                // rather than spin.
                let events = decoder.decodeAll(terminal.readAvailable())
                if !events.isEmpty { _ = handler(.input(events), terminal) }
                _ = handler(.terminate(signal: SIGHUP), terminal)
                return
            }
            if fds[0].revents != 0 { pendingInput = true }
        }
    }
}
