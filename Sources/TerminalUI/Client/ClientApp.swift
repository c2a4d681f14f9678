import FatchatCore
import Foundation
import Synchronization

/// Runs the full-screen client: ncurses on this thread, the chat's events behind a descriptor.
public enum ClientApp {
    /// Unblocks the signals the client handles on this thread. Something in the
    /// process's runtime leaves the main thread with them blocked (seen in
    /// /proc/PID/status), and then SIGWINCH never interrupts `poll()`.
    static func takeSignalsOnThisThread() {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGWINCH, SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }

    /// Runs until the user quits or a signal ends it; the terminal is restored either way.
    ///
    /// Opening the shared file can wait on another process's lock: a thread
    /// opens it while this one shows the wait and keeps the typed keys, which
    /// reach the chat once it is open. On the way out the chat gets a moment
    /// to finish; a write still held up is left to the exit, as the outbox keeps it.
    ///
    /// Reads made on this thread give up on a locked file at once
    /// (``ChatClient/withoutWaitingForLocks(_:)``): the screen says so and tries again, instead of freezing.
    /// `mouse` lets the wheel scroll and a click pick a channel (`--no-mouse` turns it off).
    public static func run(client: ChatClient, options: ChatScreen.Options = ChatScreen.Options(), mouse: Bool = true) throws {
        try ChatClient.withoutWaitingForLocks { try runBriefly(client: client, options: options, mouse: mouse) }
    }

    private static func runBriefly(client: ChatClient, options: ChatScreen.Options, mouse: Bool) throws {
        takeSignalsOnThisThread()
        let terminal = try CursesTerminal(mouse: mouse)
        // Standard error is the screen now: a skipped damaged row comes through the chat's events instead.
        client.start(reportingDamagedRows: true)
        defer { client.stop(waitingAtMost: 1) }
        let renderOptions = RenderOptions(usesColor: terminal.usesColor, theme: options.theme)
        var opening = Opening(client: client)
        var screen: ChatScreen?
        var failure: (any Error)?
        /// Makes the chat screen once the shared file is open, and hands it the keys typed meanwhile.
        func openScreen(_ terminal: CursesTerminal) {
            guard screen == nil, failure == nil, opening.isOpen else { return }
            do {
                let size = terminal.size
                let made = try ChatScreen(client: client, width: size.width, height: size.height, options: options, renderOptions: renderOptions)
                terminal.draw(made.render())
                made.loadAfterFirstFrame()
                for input in opening.typed { made.handle(input) }
                for event in opening.events { made.handle(event) }
                screen = made
            } catch where ChatScreen.isLocked(error) {
                // Tried again at the next key or tick; the wait stays on screen meanwhile.
            } catch {
                failure = error
            }
        }
        opening.waitBriefly()
        openScreen(terminal)
        if let failure {
            terminal.close()
            throw failure
        }
        terminal.draw(screen?.render() ?? opening.render(size: terminal.size, options: renderOptions))
        var frames = FramePacing()
        let pace = TickPace()
        try MainLoop.run(terminal: terminal, eventDescriptor: client.eventDescriptor, pace: pace) { event, terminal in
            defer {
                pace.quiet = screen?.isQuiet() ?? false
                pace.due = pace.quiet ? screen?.nextTickDue() : nil
            }
            let wasOpening = screen == nil
            openScreen(terminal)
            if failure != nil { return .stop }
            // Whether the frame may differ from the one on the terminal: anything but a quiet tick.
            var changed = true
            switch event {
            case .input(let inputs):
                for input in inputs {
                    switch input {
                    case .key(let key) where options.keys.action(for: key, inputIsEmpty: false) == .resize:
                        let size = terminal.size
                        screen?.resize(width: size.width, height: size.height)
                    case .key(let key) where options.keys.action(for: key, inputIsEmpty: false) == .redraw:
                        terminal.invalidate()
                    default:
                        if let screen { screen.handle(input) } else { opening.keep(input) }
                    }
                }
            case .eventsReady:
                for chat in client.drainEvents() {
                    if let screen { screen.handle(chat) } else { opening.note(chat) }
                }
            case .tick:
                let resized = terminal.followTerminalSize()
                if resized {
                    let size = terminal.size
                    screen?.resize(width: size.width, height: size.height)
                }
                let ticked = screen?.tick() ?? true
                changed = ticked || resized || wasOpening
            case .terminate:
                screen?.quit()
                return .stop
            case .callback:
                break
            }
            guard let screen else {
                terminal.draw(opening.render(size: terminal.size, options: renderOptions))
                return .proceed
            }
            for effect in screen.takeEffects() {
                switch effect {
                case .bell: terminal.bell()
                case .desktopNotification(let title, let body): terminal.notify(title: title, body: body)
                }
            }
            if screen.wantsQuit { return .stop }
            if !changed { return .proceed }
            // Keys, resizes and ticks draw at once; a flood of messages draws at most a frame a period.
            if case .eventsReady = event, let wait = frames.wait() { return .callBack(after: wait) }
            terminal.draw(screen.render())
            frames.drew()
            return .proceed
        }
        // Others see me offline at once, rather than once my heartbeat is stale.
        screen?.finish()
        if let failure { throw failure }
    }
}

/// How often arriving messages may redraw the screen. Each frame renders every loaded
/// message and writes to the terminal, so a channel flooded with a hundred messages a
/// second would otherwise cost a hundred frames a second; a key never waits for this.
struct FramePacing {
    static let period = Duration.milliseconds(33)
    private var last: ContinuousClock.Instant?

    /// How long after `now` a frame for arriving messages may be drawn; nil for at once.
    func wait(at now: ContinuousClock.Instant = .now) -> Duration? {
        guard let last else { return nil }
        let since = last.duration(to: now)
        return since < Self.period ? Self.period - since : nil
    }

    /// Notes that a frame was drawn at `now`.
    mutating func drew(at now: ContinuousClock.Instant = .now) { last = now }
}

/// The shared file being opened on a thread of its own, and what the client shows and keeps meanwhile.
struct Opening {
    private let handle: String
    private let since = Date()
    private let opened: DispatchSemaphore
    private let done: Done
    /// Keys and pastes typed before the chat could be shown, in order.
    private(set) var typed: [InputEvent] = []
    private var editor = LineEditor()

    init(client: ChatClient) {
        handle = client.handle
        let opened = DispatchSemaphore(value: 0)
        let done = Done()
        self.opened = opened
        self.done = done
        HelperThread.start("fatchat.open") {
            // Until it opens: a lock held past the store's own patience gives an error, and a new try.
            while (try? client.openSharedDatabase()) == nil { Thread.sleep(forTimeInterval: 0.5) }
            done.flag.store(true, ordering: .sequentiallyConsistent)
            opened.signal()
        }
    }

    var isOpen: Bool { done.flag.load(ordering: .sequentiallyConsistent) }

    /// Set once the file is open; a class, as an atomic cannot be copied into the thread's closure.
    private final class Done: Sendable {
        let flag = Atomic<Bool>(false)
    }

    /// Gives the usual quick open a moment, so that the chat is the first frame.
    func waitBriefly() { _ = opened.wait(timeout: .now() + 0.5) }

    /// What the chat is told once shown: the damaged rows skipped meanwhile, then the last status;
    /// the chat's own load covers the rest.
    var events: [ChatEvent] { damagedRows + (status.map { [$0] } ?? []) }
    private var status: ChatEvent?
    private var damagedRows: [ChatEvent] = []

    /// Keeps the last status, and every damaged row, for the chat.
    mutating func note(_ event: ChatEvent) {
        switch event {
        case .status: status = event
        case .damagedRowSkipped, .keyChanged: damagedRows.append(event)
        default: break
        }
    }

    /// Keeps a key for the chat, and echoes it on the input line.
    mutating func keep(_ input: InputEvent) {
        typed.append(input)
        _ = editor.handle(input)
    }

    /// A frame with the wait on the status line and what was typed so far.
    func render(size: (width: Int, height: Int), options: RenderOptions) -> Screen {
        var state = ClientViewState()
        state.status = StatusInfo(handle: handle, syncState: "waiting for the database: locked for \(Int(Date().timeIntervalSince(since))) s")
        return ClientRenderer.render(state, editor: editor, width: size.width, height: size.height, options: options)
    }
}
