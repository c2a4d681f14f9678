import Foundation
import Synchronization

/// Learns of commits through `LISTEN fatchat_changes` on the storage's own connection, with a poll as the fallback.
///
/// Each commit that appends to the change log notifies the channel with its
/// newest sequence number; a notification only says "fetch", and the fetch
/// reads from the engine's saved token, so nothing depends on a notification
/// arriving. The fetch runs on the connection that listened, so the server
/// backend that passed the notification on answers it, warm, and a client holds
/// one connection, not two.
///
/// Notifications are not durable: while no connection listens (it dropped, or
/// the server is down), `hasChanged` answers `true` at every call, and the
/// fetch that follows connects again, listens first, and reads from the token,
/// so what was committed meanwhile arrives all the same. Every `pollInterval`
/// seconds without a notification, `hasChanged` answers `true` anyway, so a
/// lost notification costs at most that long.
final class PostgresChangeSignal: StorageChangeSignal {
    /// How long a quiet connection is trusted before a fetch is made anyway.
    static let pollInterval: Double = 5

    /// When the next connection attempt may be made after failures, per process, and why the last one failed.
    private static let backoff = Mutex<(failures: Int, notBefore: Date, last: StoreError?)>((0, .distantPast, nil))

    private let session: PostgresSession
    private let listener = ChangeListener()

    /// Listens on `session`'s connection, connecting first if it has none; after a failed attempt, the
    /// next waits from 0.2 s up to 5 s, so a hundred clients do not knock at a server that is starting.
    init(session: PostgresSession) throws {
        self.session = session
        // Within the wait, the last attempt's failure stands: it says why, in the server's words where it gave any.
        let waiting = Self.backoff.withLock { $0.notBefore.timeIntervalSinceNow > 0 ? $0.last : nil }
        if let waiting { throw waiting }
        do {
            try session.addListener(listener)
        } catch {
            session.removeListener(listener)
            let failure = session.translate(error, doing: "listen for changes")
            Self.backoff.withLock { backoff in
                backoff.failures += 1
                backoff.notBefore = Date().addingTimeInterval(min(0.1 * pow(2, Double(min(backoff.failures, 10))), 5))
                backoff.last = failure
            }
            throw failure
        }
        Self.backoff.withLock { $0 = (0, .distantPast, nil) }
    }

    deinit {
        session.removeListener(listener)
    }

    func hasChanged() throws -> Bool {
        listener.isDue(pollInterval: Self.pollInterval)
    }

    func onPush(_ wake: @escaping @Sendable () -> Void) {
        listener.onPush(wake)
    }
}

/// What a session's connection told a `PostgresChangeSignal`; called on postgres-nio's event loop.
final class ChangeListener: Sendable {
    private struct State {
        var notified = false
        var listens = false
        var asked = false
        var lastTrue = Date()
        var wake: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    /// A notification came.
    func heard() {
        change { $0.notified = true }
    }

    /// A connection listens now. Notifications sent before it were not heard, so a fetch is due.
    func listening() {
        change { state in
            state.listens = true
            state.notified = true
        }
    }

    /// The connection that listened closed.
    func lost() {
        change { $0.listens = false }
    }

    /// Applies `what` to the state, then wakes the engine, outside the lock.
    private func change(_ what: (inout State) -> Void) {
        state.withLock { state -> (@Sendable () -> Void)? in
            what(&state)
            return state.wake
        }?()
    }

    func onPush(_ wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.wake = wake }
    }

    /// Whether a fetch is due: the first call, a notification since the last, no connection listening, or `pollInterval` of quiet.
    func isDue(pollInterval: Double) -> Bool {
        state.withLock { state in
            let due = !state.asked || state.notified || !state.listens || -state.lastTrue.timeIntervalSinceNow >= pollInterval
            state.asked = true
            state.notified = false
            if due { state.lastTrue = Date() }
            return due
        }
    }
}
