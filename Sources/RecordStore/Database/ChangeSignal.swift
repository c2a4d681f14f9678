import Foundation

/// Tells a watcher, cheaply, whether the database may have changed since it last asked.
///
/// On a local filesystem it reads `PRAGMA data_version` on a dedicated
/// connection; on a network filesystem it reopens the file and reads the newest
/// change sequence. The first call always answers `true`.
public final class ChangeSignal: Sendable {
    private let signal: any StorageChangeSignal

    init(_ signal: any StorageChangeSignal) { self.signal = signal }

    /// Whether another connection may have committed since the previous call.
    public func hasChanged() throws -> Bool { try signal.hasChanged() }

    /// Calls `wake` (on another thread) whenever the server pushes news of a commit; engines that cannot push never call it.
    public func onPush(_ wake: @escaping @Sendable () -> Void) { signal.onPush(wake) }

    /// Whether asking also reads the changes in (the `log` engine's poll of the logs): then a bell,
    /// which says a commit is there, does not spare the question, as the fetch reads only what it brought in.
    public var readsWhenAsked: Bool { signal.readsWhenAsked }
}

extension RecordDatabase {
    /// A new change signal for this database; keep it, and ask it on every wake-up.
    public func makeChangeSignal() throws -> ChangeSignal {
        ChangeSignal(try storage.makeChangeSignal())
    }
}
