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

    /// Inserts `count` messages into a `postgresql` container's tables in one statement each, as the engine
    /// would store them: fields, dates spread over `spread` seconds up to now, `creator`, search text, and a
    /// `deleteSelf` reference row to the channel. Half go evenly over `channels`, half over their first tenth;
    /// every thousandth text holds `rareToken`. No change rows: nobody fetches a seed's history as changes.
    func bulkMessages(count: Int, channels: [(recordName: String, display: String)], creator: String, rareToken: String, spread: Double) throws {
        var binds = PostgresBindings()
        binds.append(count)
        binds.append(Date().timeIntervalSince1970)
        binds.append(spread / Double(max(1, count)))
        binds.append(creator)
        binds.append(channels.count)
        binds.append(channels.map(\.recordName))
        binds.append(channels.map(\.display))
        binds.append(rareToken)
        try execute("""
            INSERT INTO fatchat.record (zone, name, type, fields, created, modified, creator, modifier, tag, search)
            SELECT '_defaultZone', 'seed' || g, 'Message',
                   jsonb_build_object('channel', jsonb_build_object('t', 'r', 'v', chan.name, 'x', 1),
                                      'channelName', jsonb_build_object('t', 's', 'v', chan.display),
                                      'handle', jsonb_build_object('t', 's', 'v', 'user' || (g % 10)),
                                      'text', jsonb_build_object('t', 's', 'v', body.text)),
                   $2 - ($1 - g) * $3, $2 - ($1 - g) * $3, $4, $4, md5(g::text), to_tsvector('simple', body.text)
            FROM generate_series(1, $1::integer) AS g,
                 LATERAL (SELECT CASE WHEN random() < 0.5 THEN floor(random() * $5) ELSE floor(random() * greatest(1, $5 / 10)) END + 0 * g AS k) AS pick,
                 LATERAL (SELECT ($6::text[])[pick.k + 1] AS name, ($7::text[])[pick.k + 1] AS display) AS chan,
                 LATERAL (SELECT 'word' || (g % 7919) || ' note ' || (g % 131) || ' tally ' || (g % 17)
                                 || CASE WHEN g % 1000 = 500 THEN ' ' || $8 ELSE '' END AS text) AS body
            """, binds)
        try execute("""
            INSERT INTO fatchat.reference (holder, zone, target, cascade)
            SELECT id, zone, fields -> 'channel' ->> 'v', true FROM fatchat.record WHERE type = 'Message' AND name LIKE 'seed%'
            """)
        try execute("ANALYZE fatchat.record")
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
