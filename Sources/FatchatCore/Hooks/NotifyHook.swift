import Foundation

/// `--notify-command CMD`: runs CMD for a mention of me or a direct message to me, with the
/// sender, the channel and the text as its three arguments, never through a shell.
///
/// Each argument is made inert (no control or bidi character reaches the program) and
/// bounded; at most ``maximumRunning`` hooks run at once and one that runs longer than
/// ``timeLimit`` seconds is stopped, so a slow or hanging hook never holds up the chat.
public struct NotifyHook: Sendable {
    /// The program, by path or by name in `PATH`.
    public var program: String
    public let processes: DetachedProcesses

    /// Hooks that may run at once; a notification that finds this many still running is dropped.
    public static let maximumRunning = 4
    /// Seconds a hook may run before it is stopped.
    public static let timeLimit: TimeInterval = 30
    /// The longest text passed, in characters; the sender and channel get ``maximumName``.
    public static let maximumText = 1000
    public static let maximumName = 100

    public init(program: String, processes: DetachedProcesses = DetachedProcesses()) {
        self.program = program
        self.processes = processes
    }

    /// The arguments for a notification: `CMD SENDER CHANNEL TEXT`, each inert and bounded.
    public static func arguments(sender: String, channel: String, text: String) -> [String] {
        func clean(_ value: String, _ limit: Int) -> String {
            String(Sanitizer.inert(String(value.prefix(limit).map { $0.isNewline ? " " : $0 })).prefix(limit))
        }
        return [clean(sender, maximumName), clean(channel, maximumName), clean(text, maximumText)]
    }

    /// Runs the hook for a notification, unless too many still run; returns whether it started.
    @discardableResult
    public func run(sender: String, channel: String, text: String, now: Date = Date()) -> Bool {
        processes.reap(now: now)
        guard processes.running < Self.maximumRunning else { return false }
        return (try? processes.start([program] + Self.arguments(sender: sender, channel: channel, text: text), limit: Self.timeLimit, now: now)) != nil
    }
}
