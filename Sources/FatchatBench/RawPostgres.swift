import Foundation
import PostgresNIO
import RecordStore

/// The raw-PostgreSQL baseline: the same message rows with no RecordStore in between, through
/// the same client library (postgres-nio), one row per statement in autocommit, so one transaction each.
final class RawPostgres {
    private static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private static let logger: Logger = {
        var logger = Logger(label: "fatchat-bench.postgresql")
        logger.logLevel = .critical
        return logger
    }()

    private let connection: PostgresConnection

    /// Connects to the URL's server as its role, with a password from the environment or the password file if it asks for one.
    init(url: String) throws {
        let endpoint = try PostgresEndpoint(url: url)
        let configuration: PostgresConnection.Configuration = switch endpoint.address {
        case .socket(let path):
            .init(unixSocketPath: path, username: endpoint.user, password: endpoint.password(), database: endpoint.database)
        case .tcp(let host, let port):
            .init(host: host, port: port, username: endpoint.user, password: endpoint.password(), database: endpoint.database, tls: .disable)
        }
        connection = try PostgresConnection.connect(on: Self.group.next(), configuration: configuration, id: Int(getpid()), logger: Self.logger).wait()
    }

    deinit {
        _ = try? connection.close().wait()
    }

    /// A fresh message table shaped like the chat's: channel, handle, text and date, with a (channel, date) index and a text-search index.
    func create() throws {
        try execute("DROP TABLE IF EXISTS bench_message")
        try execute("""
            CREATE TABLE bench_message (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text NOT NULL UNIQUE, channel text NOT NULL,
                handle text NOT NULL, body text NOT NULL, created double precision NOT NULL)
            """)
        try execute("CREATE INDEX bench_message_by_channel ON bench_message (channel, created)")
        try execute("CREATE INDEX bench_message_search ON bench_message USING gin (to_tsvector('simple', body))")
    }

    /// Inserts one message: one statement, its own transaction.
    func insert(name: String, channel: String, handle: String, text: String) throws {
        var binds = PostgresBindings()
        binds.append(name)
        binds.append(channel)
        binds.append(handle)
        binds.append(text)
        binds.append(Date().timeIntervalSince1970)
        try execute("INSERT INTO bench_message (name, channel, handle, body, created) VALUES ($1, $2, $3, $4, $5)", binds)
    }

    /// The rows in the table.
    func count() throws -> Int {
        let rows = try connection.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM bench_message"), logger: Self.logger).wait().rows
        return try rows.first?.decode(Int.self) ?? 0
    }

    private func execute(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws {
        _ = try connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: Self.logger).wait()
    }
}
