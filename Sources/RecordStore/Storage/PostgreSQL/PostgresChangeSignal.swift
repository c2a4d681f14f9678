import Foundation
import PostgresNIO
import Synchronization

/// Learns of commits through `LISTEN fatchat_changes` on a connection of its own, with a poll as the fallback.
///
/// Each commit that appends to the change log notifies the channel with its
/// newest sequence number; a notification only says "fetch", and the fetch
/// reads from the engine's saved token, so nothing depends on a notification
/// arriving. Notifications are not durable: when the connection drops,
/// `hasChanged` throws, the sync engine makes a new signal (connecting again,
/// with a backoff between failed attempts of up to 5 s) and fetches from its
/// token, so what was committed meanwhile arrives all the same. Every
/// `pollInterval` seconds without a notification, `hasChanged` answers `true`
/// anyway, so a lost notification costs at most that long.
final class PostgresChangeSignal: StorageChangeSignal {
    /// How long a quiet connection is trusted before a fetch is made anyway.
    static let pollInterval: Double = 5

    private struct State {
        var notified = false
        var lost = false
        var asked = false
        var lastTrue = Date()
        var wake: (@Sendable () -> Void)?
    }

    /// The state, shared with postgres-nio's callbacks on its event loop.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    /// When the next connection attempt may be made after failures, per process.
    private static let backoff = Mutex<(failures: Int, notBefore: Date)>((0, .distantPast))

    private let connection: PostgresConnection
    private let shared = Shared()
    private let endpoint: PostgresEndpoint

    init(endpoint: PostgresEndpoint, naming: ContainerNaming) throws {
        self.endpoint = endpoint
        let wait = Self.backoff.withLock { $0.notBefore.timeIntervalSinceNow }
        if wait > 0 {
            throw StoreError(.serviceUnavailable, "The PostgreSQL server at \(endpoint.place) did not answer; trying again in \(String(format: "%.1f", wait)) s. Messages wait in the outbox until it answers.")
        }
        let session = PostgresSession(endpoint: endpoint, naming: naming)
        var opened: PostgresConnection?
        do {
            let connection = try session.connect()
            opened = connection
            let shared = self.shared
            connection.addListener(channel: PostgresSchema.channel) { _, _ in
                let wake = shared.state.withLock { state -> (@Sendable () -> Void)? in
                    state.notified = true
                    return state.wake
                }
                wake?()
            }
            connection.closeFuture.whenComplete { _ in
                let wake = shared.state.withLock { state -> (@Sendable () -> Void)? in
                    state.lost = true
                    return state.wake
                }
                wake?()
            }
            try PostgresLink(connection: connection, session: session).execute("LISTEN \(PostgresSchema.channel)")
            self.connection = connection
        } catch {
            if let opened { PostgresSession.close(opened) }
            Self.backoff.withLock { backoff in
                backoff.failures += 1
                backoff.notBefore = Date().addingTimeInterval(min(0.1 * pow(2, Double(min(backoff.failures, 10))), 5))
            }
            throw session.translate(error, doing: "listen for changes")
        }
        Self.backoff.withLock { $0 = (0, .distantPast) }
    }

    deinit {
        PostgresSession.close(connection)
    }

    func hasChanged() throws -> Bool {
        try shared.state.withLock { state in
            if state.lost {
                throw StoreError(.serviceUnavailable, "The connection to the PostgreSQL server at \(endpoint.place) was lost; reconnecting, then fetching everything since the saved token.")
            }
            let due = !state.asked || state.notified || -state.lastTrue.timeIntervalSinceNow >= Self.pollInterval
            state.asked = true
            state.notified = false
            if due { state.lastTrue = Date() }
            return due
        }
    }

    func onPush(_ wake: @escaping @Sendable () -> Void) {
        shared.state.withLock { $0.wake = wake }
    }
}
