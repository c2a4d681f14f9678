import RecordStore
import SyncEngine

/// A front end's helper thread, under a name `top -H` and a crash's backtrace show.
///
/// The engine's `NamedThread`, passed on: front ends see FatchatCore only.
public enum HelperThread {
    /// Runs `body` on a new detached thread called `name` (at most 15 bytes are kept).
    public static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        NamedThread.start(name, body)
    }
}
