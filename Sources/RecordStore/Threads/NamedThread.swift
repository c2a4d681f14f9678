import CStatfs
import Foundation

/// Starts a thread that carries its name, as `top -H`, `ps -L`, gdb and a crash's backtrace show it.
///
/// Foundation's `Thread.name`, set before `start()`, is dropped on Linux: the
/// setter names only a thread that is already running, and the new thread
/// takes the name of the one that started it (a pool thread's
/// "com.apple.root.default-qos", cut to its last 15 bytes). So the thread
/// names itself (`pthread_setname_np` on `pthread_self()`) before it runs `body`.
public enum NamedThread {
    /// The longest name Linux keeps, in bytes; a longer one is cut to this, between characters.
    public static let maximumNameLength = 15

    /// Runs `body` on a new detached thread called `name`.
    public static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        // Cut between characters: half of one would decode to a replacement character, which is longer.
        var kept = Substring(name)
        while kept.utf8.count > maximumNameLength { kept.removeLast() }
        let threadName = String(kept)
        let thread = Thread {
            _ = fatchat_name_this_thread(threadName)
            body()
        }
        thread.start()
    }
}
