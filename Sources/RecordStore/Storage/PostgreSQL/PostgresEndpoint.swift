import Foundation

/// Where a `postgresql` container's public database lives: a server address, a database and a role, read from its URL.
///
/// The URL is what `container.json` keeps, so it must hold no password. The
/// role is the URL's user, else `$PGUSER`, else the OS user's name; a password,
/// when the server asks for one, comes from `$PGPASSWORD` or the password file
/// (`$PGPASSFILE`, else `~/.pgpass`), as libpq finds them. With no host, or a
/// host that is a directory (`postgresql:///chat?host=/run/postgresql`), the
/// connection goes through the server's Unix socket, where peer authentication
/// needs no password at all.
public struct PostgresEndpoint: Sendable, Equatable {
    /// How the client reaches the server.
    public enum Address: Sendable, Equatable {
        /// The Unix socket file, `<directory>/.s.PGSQL.<port>`.
        case socket(path: String)
        case tcp(host: String, port: Int)
    }

    /// The URL as given, without credentials.
    public var url: String
    public var address: Address
    public var database: String
    public var user: String

    /// Debian's socket directory, used when the URL names no host.
    static let defaultSocketDirectory = "/var/run/postgresql"

    /// Reads a `postgresql://` or `postgres://` URL; refuses one that carries a password, or that is not such a URL.
    public init(url text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased(), scheme == "postgresql" || scheme == "postgres" else {
            throw StoreError(.invalidArguments, "'\(text)' is not a PostgreSQL URL; write it as postgresql://HOST/DATABASE, or postgresql:///DATABASE?host=/run/postgresql for the local socket.")
        }
        if parts.password != nil {
            throw StoreError(.invalidArguments, "The URL holds a password, and it would be written to container.json for everyone to read. Leave it out: use peer authentication on the Unix socket, a password file (PGPASSFILE or ~/.pgpass), or PGPASSWORD.")
        }
        let database = parts.path.hasPrefix("/") ? String(parts.path.dropFirst()) : parts.path
        guard !database.isEmpty, !database.contains("/") else {
            throw StoreError(.invalidArguments, "The URL '\(text)' names no database; write it as postgresql://HOST/DATABASE.")
        }
        let query = Dictionary((parts.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
        let portText = query["port"] ?? parts.port.map(String.init) ?? environment["PGPORT"] ?? "5432"
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw StoreError(.invalidArguments, "The URL '\(text)' has port '\(portText)', which is not a TCP port number.")
        }
        let host = query["host"] ?? parts.host.flatMap { $0.isEmpty ? nil : ($0.removingPercentEncoding ?? $0) } ?? environment["PGHOST"] ?? ""
        if host.isEmpty || host.hasPrefix("/") {
            address = .socket(path: (host.isEmpty ? Self.defaultSocketDirectory : host) + "/.s.PGSQL.\(port)")
        } else {
            address = .tcp(host: host, port: port)
        }
        self.url = text
        self.database = database
        self.user = query["user"] ?? parts.user ?? environment["PGUSER"] ?? UserIdentity.current.userName
    }

    /// Where the server is, as an error message names it.
    public var place: String {
        switch address {
        case .socket(let path): "the Unix socket \(path)"
        case .tcp(let host, let port): "\(host):\(port)"
        }
    }

    /// The password for this role from `$PGPASSWORD`, else the first matching line of the password file; nil when there is none.
    public func password(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let password = environment["PGPASSWORD"] { return password }
        let file = environment["PGPASSFILE"] ?? (UserIdentity.current.homeDirectory + "/.pgpass")
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        let (host, port): (String, String) = switch address {
        case .socket: ("localhost", socketPort)
        case .tcp(let host, let port): (host, String(port))
        }
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = Self.passFileFields(String(line))
            guard fields.count == 5 else { continue }
            let wanted = [host, port, database, user]
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    /// The port in a socket's file name, `.s.PGSQL.<port>`.
    private var socketPort: String {
        guard case .socket(let path) = address, let dot = path.lastIndex(of: ".") else { return "5432" }
        return String(path[path.index(after: dot)...])
    }

    /// Splits a `.pgpass` line at unescaped colons, undoing `\:` and `\\`.
    static func passFileFields(_ line: String) -> [String] {
        var fields: [String] = [], current = "", escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        return fields
    }
}
