import Foundation
import PostgresNIO
import Synchronization

/// One connection to the server, used by one caller at a time, with RecordStore's blocking API on top of postgres-nio's futures.
///
/// postgres-nio runs on SwiftNIO event loops; RecordStore's callers are plain
/// threads that wait for an answer. Every process shares one event loop group
/// of one thread (`eventLoops`), and a call waits on its future from the
/// caller's thread. Waiting on an event loop thread would deadlock that loop,
/// so such a call is refused with an error instead. A connection that fails is
/// dropped and the next call connects again; a server that cannot be reached
/// is `serviceUnavailable`, which the sync engine's outbox treats as "try again later".
final class PostgresSession: Sendable {
    /// The event loops of every PostgreSQL connection in this process: one thread, made on first use, never shut down.
    static let eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    let endpoint: PostgresEndpoint
    /// Words the errors for the program that opened the container.
    let naming: ContainerNaming
    private let connection = Mutex<PostgresConnection?>(nil)
    private let nextID = Atomic<Int>(1)
    /// The COMMIT that ended the last read-only transaction, sent and not waited for: nothing
    /// can be lost if it fails, so the next caller checks it instead of the reader waiting.
    private let unsettledCommit = Mutex<(link: PostgresLink, commit: PostgresLink.Answer<PostgresQueryResult>)?>(nil)
    /// The statements the current connection has prepared, by name (`PostgresLink.executeLater`).
    private let preparedNames = Mutex<(connection: PostgresConnection?, names: Set<String>)>((nil, []))
    /// Set by a prepared statement that failed: the connection is dropped once its caller is done, since it may keep the failure.
    private let dropConnection = Atomic<Bool>(false)
    /// Who hears the change channel's notifications, and where `LISTEN` was sent.
    private let listening = Mutex(Listening())

    private struct Listening {
        var listeners: [ObjectIdentifier: ChangeListener] = [:]
        /// The connection `LISTEN` was last sent on, answered or refused; nil once it closed.
        var connection: PostgresConnection?
        /// Whether the server answered that `LISTEN`.
        var listens = false
    }

    init(endpoint: PostgresEndpoint, naming: ContainerNaming) {
        self.endpoint = endpoint
        self.naming = naming
    }

    deinit {
        if let open = connection.withLock({ $0 }) { Self.close(open) }
    }

    /// Runs `body` with the connection, connecting first if there is none; callers queue for it.
    func withLink<T>(_ body: (PostgresLink) throws -> T) throws -> T {
        try Self.refuseOnEventLoop()
        var result: Result<T, any Error> = .failure(StoreError(.internalError, "The PostgreSQL connection was not used."))
        connection.withLock { slot in
            do {
                var open = try slot.flatMap { $0.isClosed ? nil : $0 } ?? connect()
                // A read-only COMMIT that failed leaves its connection in a state nobody knows: start over.
                if let unsettled = unsettledCommit.withLock({ pending in defer { pending = nil }; return pending }),
                   unsettled.link.connection === open, (try? unsettled.link.wait(unsettled.commit)) == nil {
                    Self.close(open)
                    open = try connect()
                }
                slot = open
                try listen(on: open)
                result = .success(try body(PostgresLink(connection: open, session: self)))
            } catch {
                if let open = slot, open.isClosed || Self.isConnectionLost(error) {
                    Self.close(open)
                    slot = nil
                }
                result = .failure(error)
            }
            if dropConnection.exchange(false, ordering: .relaxed), let open = slot {
                Self.close(open)
                slot = nil
            }
        }
        return try result.get()
    }

    /// Hears the change channel on the session's own connection from now on, connecting if there is none yet.
    ///
    /// A receiver's fetch then runs on the connection its notification came on, so each
    /// client keeps one server backend busy per commit, not two (`BENCHMARKS.md`,
    /// thirty-second round). Every connection the session opens later listens before
    /// its first use; while none does, the listener's signal answers "fetch" at every look.
    func addListener(_ listener: ChangeListener) throws {
        listening.withLock { $0.listeners[ObjectIdentifier(listener)] = listener }
        try withLink { link in
            // A connection that listened before this listener came: it hears from now on.
            let listens = listening.withLock { $0.connection === link.connection && $0.listens }
            if listens { listener.listening() }
        }
    }

    func removeListener(_ listener: ChangeListener) {
        listening.withLock { $0.listeners[ObjectIdentifier(listener)] = nil }
    }

    /// Sends `LISTEN` on `connection` the first time it is used while someone listens, and tells the listeners when it closes.
    ///
    /// A server that refuses `LISTEN` (a standby in recovery) still serves reads and writes on the
    /// connection; the listeners are told they hear nothing, so they look at every wake-up, and it
    /// is not asked again on that connection. The channel stays listened to when the last listener
    /// goes; its notifications are then dropped here.
    private func listen(on connection: PostgresConnection) throws {
        let wanted = listening.withLock { state -> Bool in
            guard !state.listeners.isEmpty, state.connection !== connection else { return false }
            state.connection = connection
            state.listens = false
            return true
        }
        guard wanted else { return }
        // postgres-nio sends a LISTEN of its own for its first listener, and stops the process if a
        // notification comes while that LISTEN is unanswered. So it goes first: ours below is queued
        // behind it, and once ours is answered both are, and what the server sends is heard. (Ours
        // first let another client's commit notify in between: a sender crashed in CI.)
        connection.addListener(channel: PostgresSchema.channel) { [weak self] _, _ in
            self?.tellListeners { $0.heard() }
        }
        do {
            try PostgresLink(connection: connection, session: self).execute("LISTEN \(PostgresSchema.channel)")
        } catch where Self.isConnectionLost(error) {
            _ = forget(connection)
            throw error
        } catch {
            tellListeners { $0.lost() }
            return
        }
        // Heard from here on. A notification that came before concerns a commit that the fetch each
        // listener is asked for now (`ChangeListener.listening`) reads anyway.
        connection.closeFuture.whenComplete { [weak self, weak connection] _ in
            guard let self, self.forget(connection) else { return }
            tellListeners { $0.lost() }
        }
        let hearing = listening.withLock { state -> [ChangeListener] in
            guard state.connection === connection else { return [] }
            state.listens = true
            return Array(state.listeners.values)
        }
        hearing.forEach { $0.listening() }
    }

    /// Stops counting `connection` as the one that listens; returns whether it was.
    private func forget(_ connection: PostgresConnection?) -> Bool {
        listening.withLock { state in
            guard let connection, state.connection === connection else { return false }
            state.connection = nil
            state.listens = false
            return true
        }
    }

    private func tellListeners(_ tell: (ChangeListener) -> Void) {
        listening.withLock { Array($0.listeners.values) }.forEach(tell)
    }

    /// Keeps a read-only transaction's COMMIT, sent on the connection, for the next caller to check.
    func leaveUnsettled(_ commit: PostgresLink.Answer<PostgresQueryResult>, on link: PostgresLink) {
        unsettledCommit.withLock { $0 = (link, commit) }
    }

    /// Has the connection dropped once the caller that holds it is done: postgres-nio remembers a
    /// statement that failed to prepare and fails it for the connection's life.
    fileprivate func dropConnectionAfterUse() {
        dropConnection.store(true, ordering: .relaxed)
    }

    /// Whether `connection` has prepared the statement `name`.
    fileprivate func hasPrepared(_ name: String, on connection: PostgresConnection) -> Bool {
        preparedNames.withLock { $0.connection === connection && $0.names.contains(name) }
    }

    fileprivate func notePrepared(_ name: String, on connection: PostgresConnection) {
        preparedNames.withLock { prepared in
            if prepared.connection !== connection { prepared = (connection, []) }
            prepared.names.insert(name)
        }
    }

    /// Closes a connection without waiting, keeping it alive until it is closed (postgres-nio asserts that a connection is closed before it goes).
    static func close(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// Closes the connection; the next call opens a new one.
    func disconnect() {
        if let open = connection.withLock({ slot -> PostgresConnection? in defer { slot = nil }; return slot }) {
            _ = try? open.close().wait()
        }
    }

    /// Opens a new connection to the endpoint, as its role.
    func connect() throws -> PostgresConnection {
        try Self.refuseOnEventLoop()
        var configuration: PostgresConnection.Configuration = switch endpoint.address {
        case .socket(let path):
            .init(unixSocketPath: path, username: endpoint.user, password: endpoint.password(), database: endpoint.database)
        case .tcp(let host, let port):
            .init(host: host, port: port, username: endpoint.user, password: endpoint.password(), database: endpoint.database, tls: .disable)
        }
        configuration.options.connectTimeout = .seconds(5)
        do {
            return try PostgresConnection.connect(on: Self.eventLoops.next(), configuration: configuration,
                                                  id: nextID.wrappingAdd(1, ordering: .relaxed).oldValue, logger: Self.logger).wait()
        } catch {
            throw translate(error, doing: "connect")
        }
    }

    /// postgres-nio's log, kept quiet: failures reach the caller as errors.
    static let logger: Logger = {
        var logger = Logger(label: "recordstore.postgresql")
        logger.logLevel = .critical
        return logger
    }()

    /// Throws when the current thread is one of SwiftNIO's event loops, where waiting for a future would never return.
    static func refuseOnEventLoop() throws {
        if MultiThreadedEventLoopGroup.currentEventLoop != nil {
            throw StoreError(.internalError, "RecordStore's PostgreSQL engine was called on a SwiftNIO event loop thread; its calls wait for the server, so make them from another thread.")
        }
    }

    /// Whether an error means the connection is gone, rather than one statement failing on a live one.
    static func isConnectionLost(_ error: any Error) -> Bool {
        if let store = error as? StoreError { return store.code == .serviceUnavailable }
        if let deferred = error as? PostgresLink.DeferredFailure { return deferred.error.code == .serviceUnavailable }
        guard let psql = error as? PSQLError else { return false }
        return [.serverClosedConnection, .connectionError, .uncleanShutdown, .clientClosedConnection].contains(psql.code)
    }

    /// A `StoreError` that says what failed, in the server's words where it gave any, keeping its SQLSTATE.
    func translate(_ error: any Error, doing what: String) -> StoreError {
        if let store = error as? StoreError { return store }
        guard let psql = error as? PSQLError else {
            return StoreError(.serviceUnavailable, "Cannot \(what) on the PostgreSQL server at \(endpoint.place): \(error). Messages wait in the outbox until it answers.")
        }
        if let info = psql.serverInfo {
            let state = info[.sqlState] ?? ""
            let message = info[.message] ?? "an error"
            let detail = info[.detail].map { " (\($0))" } ?? ""
            let said = "PostgreSQL said: \(message)\(detail) [SQLSTATE \(state)]"
            switch state {
            case "42501":
                return StoreError(.permissionFailure, "The role \(endpoint.user) may not do that in \(endpoint.database): \(said). Only a record's creator may change or delete it.")
            case "28000", "28P01":
                return StoreError(.permissionFailure, "The server at \(endpoint.place) refused the role \(endpoint.user): \(said). Ask its administrator for a role of your OS user's name, or set PGPASSFILE.")
            case "3D000":
                return StoreError(.badContainer, "There is no database \(endpoint.database) at \(endpoint.place): \(said).")
            case "23505", "23503", "23514", "23502":
                return StoreError(.constraintViolation, "The server refused the change: \(said).")
            case "40001", "40P01", "55P03":
                return StoreError(.zoneBusy, "The server could not order this change with another one: \(said). It is retried.")
            case "54000", "54001", "22001":
                return StoreError(.limitExceeded, "The server refused a value as too large: \(said).")
            case let code where code.hasPrefix("08") || code.hasPrefix("57P") || code == "53300":
                return StoreError(.serviceUnavailable, "The PostgreSQL server at \(endpoint.place) is not available: \(said). Messages wait in the outbox until it is.")
            case let code where code.hasPrefix("22"):
                return StoreError(.invalidArguments, "The server refused a value: \(said).")
            default:
                return StoreError(.internalError, "A statement failed on the PostgreSQL server at \(endpoint.place): \(said).")
            }
        }
        let reason: String = switch psql.code {
        case .connectionError: "nothing answers there" + (psql.underlying.map { " (\($0))" } ?? "")
        case .serverClosedConnection, .uncleanShutdown: "the server closed the connection"
        case .authMechanismRequiresPassword: "it asks for a password; put one in a password file (PGPASSFILE or ~/.pgpass) or PGPASSWORD"
        case .unsupportedAuthMechanism: "it asks for an authentication method this client does not support"
        default: "\(psql.code)"
        }
        return StoreError(.serviceUnavailable, "Cannot \(what) on the PostgreSQL server at \(endpoint.place) as \(endpoint.user): \(reason). Messages wait in the outbox until it answers.")
    }
}

/// The connection while one caller holds it: statements with bound parameters, waited for.
struct PostgresLink {
    let connection: PostgresConnection
    let session: PostgresSession
    /// Statements sent with `executeLater` and not checked yet, oldest first.
    private let unanswered = Unanswered()

    /// Sends a statement whose answer the caller does not need now, such as an INSERT with no
    /// RETURNING: the next statement waited for (a transaction's COMMIT at the latest) checks it
    /// first. postgres-nio still runs it in turn, after the answer to the statement before it.
    /// A failure there throws `DeferredFailure`: the server has aborted the transaction, so it
    /// fails whole, not the statement that happened to wait.
    func executeLater(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) {
        checkLater(send(sql, binds))
    }

    /// `executeLater` for a statement the connection keeps prepared, with `check` given the rows
    /// it returned. Its first run on a connection is waited for: postgres-nio sends that run once
    /// the preparation is answered, behind whatever was sent meanwhile.
    func executeLater<Statement: PreparedSQL>(_ statement: Statement.Type, _ binds: PostgresBindings, check: (@Sendable ([PostgresRow]) throws -> Void)? = nil) {
        let answer = sendPrepared(statement, binds)
        if !session.hasPrepared(Statement.name, on: connection), (try? wait(answer)) != nil {
            session.notePrepared(Statement.name, on: connection)
        }
        later {
            let rows = try wait(answer)
            try check?(rows)
        }
    }

    /// Has the next statement waited for check an answer already sent, such as a transaction's BEGIN.
    func checkLater(_ answer: Answer<PostgresQueryResult>) {
        later { _ = try wait(answer) }
    }

    private func later(_ check: @escaping @Sendable () throws -> Void) {
        unanswered.checks.withLock { $0.append(check) }
    }

    /// Waits for what `executeLater` and `checkLater` left, throwing the first failure among them as `DeferredFailure`.
    func settle() throws {
        for check in unanswered.checks.withLock({ checks in defer { checks = [] }; return checks }) {
            do {
                try check()
            } catch let error as StoreError {
                throw DeferredFailure(error: error)
            }
        }
    }

    /// A statement sent earlier failed: the whole transaction fails with `error`.
    struct DeferredFailure: Error {
        let error: StoreError
    }

    private final class Unanswered: Sendable {
        let checks = Mutex<[@Sendable () throws -> Void]>([])
    }

    /// Runs one statement and returns its rows. Every value goes in `binds`; `sql` holds none.
    func rows(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> [PostgresRow] {
        try run(sql, binds).rows
    }

    /// Runs one statement and returns how many rows it touched.
    @discardableResult
    func execute(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> Int {
        try run(sql, binds).metadata.rows ?? 0
    }

    /// Runs one statement and returns its command tag: the server answers the COMMIT of a transaction it aborted with ROLLBACK.
    func commandTag(_ sql: String) throws -> String {
        try run(sql, PostgresBindings()).metadata.command
    }

    /// Runs a statement that the connection keeps prepared, and returns its rows: the server parses
    /// and plans it once per connection instead of at each call, which is most of what a short,
    /// frequent read such as the change feed costs it. `binds` fill the statement's `$1`, `$2`, …
    ///
    /// postgres-nio prepares statements only through its async API. The task runs wholly on the
    /// connection's event loop (`PostgresLoopExecutor`), never on Swift's thread pool: a caller
    /// that blocks a pool thread while it waits (a test, say) cannot starve it, and it wakes
    /// no more threads than `rows` does.
    func preparedRows<Statement: PreparedSQL>(_ statement: Statement.Type, _ binds: PostgresBindings) throws -> [PostgresRow] {
        // Sent before what went earlier is checked: answers come in order, and this thread then waits once, not twice.
        let answer = sendPrepared(statement, binds)
        try settle()
        return try wait(answer)
    }

    /// Sends a statement the connection keeps prepared, through postgres-nio's async API, as a
    /// task on the event loop. A failure drops the connection once its caller is done:
    /// postgres-nio remembers a preparation that failed, and fails that statement for the
    /// connection's life.
    ///
    /// Its first run on a connection goes out only once the preparation is answered, behind
    /// whatever was sent meanwhile; so a caller sends nothing that must follow it before it
    /// waited for the answer (or uses the prepared `executeLater`, which sees to that).
    func sendPrepared<Statement: PreparedSQL>(_ statement: Statement.Type, _ binds: PostgresBindings) -> Answer<[PostgresRow]> {
        let answer = Answer<[PostgresRow]>()
        let connection = self.connection
        let session = self.session
        Task(executorPreference: PostgresLoopExecutor.shared) {
            do {
                var rows: [PostgresRow] = []
                // Every row is read, so the statement is done when the task is.
                for try await row in try await connection.execute(PreparedRead<Statement>(bindings: binds), logger: PostgresSession.logger) {
                    rows.append(row)
                }
                answer.complete(.success(rows))
            } catch {
                // A wrong guess is the statement's answer, not a failed preparation.
                if !GuessFailed.isGuessFailed(error) { session.dropConnectionAfterUse() }
                answer.complete(.failure(error))
            }
        }
        return answer
    }

    /// How long a statement may go unanswered before the connection is given up.
    static let statementTimeout: Double = 60

    /// Runs one statement and waits for it, after checking what was sent before it.
    private func run(_ sql: String, _ binds: PostgresBindings) throws -> PostgresQueryResult {
        let answer = send(sql, binds)
        try settle()
        return try wait(answer)
    }

    /// Sends one statement without waiting for its answer; `wait` gives it. Statements on one
    /// connection are answered in the order they were sent, so once a later statement's answer is
    /// in, this one's is too.
    func send(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) -> Answer<PostgresQueryResult> {
        answer(connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: PostgresSession.logger))
    }

    /// The answer a future will give, for `wait`.
    private func answer<Value: Sendable>(_ future: EventLoopFuture<Value>) -> Answer<Value> {
        let answer = Answer<Value>()
        future.whenComplete(answer.complete)
        return answer
    }

    /// Waits for a statement's answer, a quarter second at a time.
    ///
    /// A future that is never completed must not hold the caller for ever:
    /// a query sent as the server was killed was seen to wait on a closed
    /// connection. Between slices the connection is checked; a closed one, or
    /// no answer within `statementTimeout`, gives the connection up and throws
    /// `serviceUnavailable`, which the outbox retries.
    @discardableResult
    func wait<Value: Sendable>(_ answer: Answer<Value>) throws -> Value {
        var waited = 0.0
        while answer.result.withLock({ $0 == nil }), answer.done.wait(timeout: .now() + 0.25) == .timedOut {
            waited += 0.25
            if connection.isClosed || waited >= Self.statementTimeout {
                PostgresSession.close(connection)
                throw StoreError(.serviceUnavailable, "The PostgreSQL server at \(session.endpoint.place) stopped answering; the connection was dropped and is made again on the next try. Messages wait in the outbox until it answers.")
            }
        }
        do {
            guard let result = answer.result.withLock({ $0 }) else { throw StoreError(.internalError, "A statement finished without a result.") }
            return try result.get()
        } catch {
            if GuessFailed.isGuessFailed(error) { throw GuessFailed() }
            throw session.translate(error, doing: "run a statement")
        }
    }

    /// A batch saved on a guess found it wrong (`PostgresWriteSQL.guessFailed`): nothing was saved,
    /// and the transaction runs again, looking up (`PostgresStorage.write`).
    struct GuessFailed: Error {
        static func isGuessFailed(_ error: any Error) -> Bool {
            (error as? PSQLError)?.serverInfo?[.sqlState] == PostgresWriteSQL.guessFailed
        }
    }

    /// The answer to one statement, handed from the event loop to the caller that waits for it.
    final class Answer<Value: Sendable>: Sendable {
        fileprivate let result = Mutex<Result<Value, any Error>?>(nil)
        fileprivate let done = DispatchSemaphore(value: 0)

        /// Hands the result to the caller that waits for it.
        fileprivate func complete(_ result: Result<Value, any Error>) {
            self.result.withLock { $0 = result }
            done.signal()
        }
    }
}

/// Builds the bound values of one statement, handing out `$1`, `$2`, … in order.
struct PostgresArguments {
    private(set) var binds = PostgresBindings()

    /// Binds a value and returns its placeholder.
    mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    /// Binds an optional value, NULL when absent, and returns its placeholder.
    mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value?) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }
}

/// A statement that each connection keeps prepared once it has run it (`PostgresLink.preparedRows`
/// and the prepared `executeLater`):
/// its SQL, and its name on the server, which must be unique within its first 63 bytes.
protocol PreparedSQL: Sendable {
    static var name: String { get }
    static var sql: String { get }
}

/// A `PreparedSQL` statement with its bound values, whose rows come back as they are.
struct PreparedRead<Statement: PreparedSQL>: PostgresPreparedStatement {
    static var name: String { Statement.name }
    static var sql: String { Statement.sql }
    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}

/// The event loop of every connection as a task executor: a task that prefers it runs there,
/// nonisolated async functions it calls included, and resumes there.
final class PostgresLoopExecutor: TaskExecutor {
    static let shared = PostgresLoopExecutor()
    private let loop = PostgresSession.eventLoops.next()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
