import FatchatCore
import Foundation
import SyncEngine

/// Runs the full-screen client: ncurses on this thread, the sync engine behind a descriptor.
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
    public static func run(client: ChatClient, options: ChatScreen.Options = ChatScreen.Options()) throws {
        takeSignalsOnThisThread()
        let terminal = try CursesTerminal()
        let engine = client.engine
        engine.start()
        defer { engine.stop() }
        let size = terminal.size
        let screen: ChatScreen
        do {
            screen = try ChatScreen(client: client, width: size.width, height: size.height, options: options,
                                    renderOptions: RenderOptions(usesColor: terminal.usesColor))
        } catch {
            terminal.close()
            throw error
        }
        terminal.draw(screen.render())
        screen.loadUnreadCounts()
        terminal.draw(screen.render())
        try MainLoop.run(terminal: terminal, eventDescriptor: engine.eventDescriptor) { event, terminal in
            switch event {
            case .input(let inputs):
                for input in inputs {
                    switch input {
                    case .key(let key) where ClientAction.forKey(key, inputIsEmpty: false) == .resize:
                        let size = terminal.size
                        screen.resize(width: size.width, height: size.height)
                    case .key(let key) where ClientAction.forKey(key, inputIsEmpty: false) == .redraw:
                        terminal.invalidate()
                    default:
                        screen.handle(input)
                    }
                }
            case .eventsReady:
                while let event = engine.nextEvent() {
                    for chat in ChatEvent.from(event) { screen.handle(chat) }
                }
            case .tick:
                screen.tick()
            case .terminate:
                screen.quit()
                return .stop
            }
            for effect in screen.takeEffects() {
                switch effect {
                case .bell: terminal.bell()
                case .desktopNotification(let title, let body): terminal.notify(title: title, body: body)
                }
            }
            if screen.wantsQuit { return .stop }
            terminal.draw(screen.render())
            return .proceed
        }
    }
}
