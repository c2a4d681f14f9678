import Foundation
import Synchronization

/// A throwaway PostgreSQL cluster for one test: `initdb` into a temporary directory, a server
/// listening on a Unix socket in that directory and on 127.0.0.1, stopped and removed by `stop()`.
///
/// Tests run as root and PostgreSQL refuses to run as root, so the server runs as the OS user
/// `postgres` (Debian's package makes it) through `runuser`. Local connections use peer
/// authentication: an OS user reaches the role of the same name, and nobody else's.
public final class PostgresCluster: Sendable {
    /// Why a cluster could not be made or a command in it failed.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The OS user the server runs as, and the cluster's superuser role.
    public static let serverUser = "postgres"

    /// The folder of `initdb`, `pg_ctl` and `psql`: `$FATCHAT_PG_BIN`, else the newest under `/usr/lib/postgresql`.
    public static var binDirectory: String? {
        if let forced = ProcessInfo.processInfo.environment["FATCHAT_PG_BIN"] { return forced }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        return versions.reversed().map { "\(root)/\($0)/bin" }.first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
    }

    /// Nil when a cluster can be made here; otherwise why not, for a test's skip message.
    public static var unavailableReason: String? {
        if getuid() != 0 { return "PostgreSQL tests run as root (they start the server as \(serverUser) and make OS users)" }
        if binDirectory == nil { return "PostgreSQL is not installed (apt-get install postgresql; .ci/run does)" }
        if OSUsers.ids(of: serverUser) == nil { return "there is no OS user \(serverUser) to run the server as" }
        return nil
    }

    /// Whether the PostgreSQL tests run: the server is installed, or this is CI, where its absence must fail loudly.
    public static var shouldRun: Bool {
        unavailableReason == nil || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// The cluster's directory: `data/`, the server's log, and the Unix socket.
    public let directory: String
    /// The TCP port on 127.0.0.1; the socket is `.s.PGSQL.<port>` in `directory`.
    public let port: Int
    /// The database every test uses; created by `start`.
    public let database: String
    /// Where the server listens for TCP: 127.0.0.1, and any address `init` was given.
    public let listenAddresses: [String]
    private let bin: String

    /// Makes and starts a cluster with one database, `database`, owned by the superuser.
    ///
    /// `alsoListeningOn` adds addresses to 127.0.0.1, and `allowing` lets clients from those networks (CIDR)
    /// in with a password, as a server that other hosts reach would.
    public init(database: String = "fatchat", alsoListeningOn addresses: [String] = [], allowing networks: [String] = []) throws {
        if let reason = Self.unavailableReason { throw Failure(description: reason) }
        guard let bin = Self.binDirectory, let server = OSUsers.ids(of: Self.serverUser) else {
            throw Failure(description: "PostgreSQL is not installed")
        }
        var template = Array("/tmp/fatchat-pg-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw Failure(description: "mkdtemp failed: \(String(cString: strerror(errno)))") }
        directory = String(cString: template)
        self.bin = bin
        self.database = database
        listenAddresses = ["127.0.0.1"] + addresses
        // The socket lives here, so every test user must be able to reach it; only the server writes it.
        chown(directory, server.uid, server.gid)
        chmod(directory, 0o755)
        port = try Self.freePort()
        do {
            try runAsServer([bin + "/initdb", "-D", directory + "/data", "-U", Self.serverUser, "--no-sync",
                             "--auth-local=peer", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8"])
            let rules = networks.map { "host all all \($0) scram-sha-256\n" }.joined()
            if !rules.isEmpty, let hba = FileHandle(forWritingAtPath: directory + "/data/pg_hba.conf") {
                hba.seekToEndOfFile()
                hba.write(Data(rules.utf8))
                hba.closeFile()
            }
            try start()
            try psql("CREATE DATABASE \(database)", database: "postgres")
        } catch {
            stop()
            throw error
        }
    }

    /// One cluster for the whole test process, started on first use and stopped when the process exits.
    ///
    /// Each test takes a database of its own in it (`makeDatabase`), which is
    /// far cheaper than a cluster of its own; tests that stop or kill the
    /// server make their own cluster instead.
    public static func shared() throws -> PostgresCluster {
        try sharedCluster.withLock { slot in
            if let slot { return slot }
            let cluster = try PostgresCluster()
            slot = cluster
            atexit { PostgresCluster.sharedCluster.withLock { $0?.stop() } }
            return cluster
        }
    }

    private static let sharedCluster = Mutex<PostgresCluster?>(nil)

    /// Makes a new, empty database owned by the role of `owner` (made if missing), and returns its URL.
    public func makeDatabase(owner: String = "root") throws -> String {
        try createRole(owner)
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        try psql("CREATE DATABASE \(name) OWNER \"\(owner)\"", database: "postgres")
        return url(database: String(name))
    }

    /// A libpq-style URL of `database` over the Unix socket, with no user: peer authentication picks the role.
    public func url(database: String) -> String { "postgresql:///\(database)?host=\(directory)&port=\(port)" }

    /// A libpq-style URL of the database over the Unix socket, with no user: peer authentication picks the role.
    public var url: String { "postgresql:///\(database)?host=\(directory)&port=\(port)" }

    /// Starts the server (again, after `kill`), waiting until it accepts connections.
    public func start() throws {
        // fsync=off: the tests kill the server process, never the machine, so what the kernel holds survives;
        // synchronous_commit stays on, or a commit a client saw could vanish with a killed server.
        let options = "-k \(directory) -p \(port) -c listen_addresses=\(listenAddresses.joined(separator: ",")) -c fsync=off -c max_connections=200"
        try runAsServer([bin + "/pg_ctl", "-D", directory + "/data", "-l", directory + "/server.log", "-w", "-t", "60", "-o", options, "start"])
    }

    /// Stops the server at once, as a crash or a power cut would (`pg_ctl stop -m immediate`); `start` brings it back.
    public func kill() throws {
        try runAsServer([bin + "/pg_ctl", "-D", directory + "/data", "-m", "immediate", "-w", "stop"])
    }

    /// Stops the server if it runs and removes the cluster's directory.
    public func stop() {
        if FileManager.default.fileExists(atPath: directory + "/data/postmaster.pid") {
            _ = try? runAsServer([bin + "/pg_ctl", "-D", directory + "/data", "-m", "fast", "-w", "stop"])
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs SQL with `psql` as the OS user `osUser` (peer authentication: as the role of that name); returns its output, unaligned.
    @discardableResult
    public func psql(_ sql: String, as osUser: String = PostgresCluster.serverUser, database: String? = nil) throws -> String {
        try run(Self.asUser(osUser) + [bin + "/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                 "-h", directory, "-p", String(port), "-d", database ?? self.database, "-c", sql])
    }

    /// Gives a role a password, for a client that reaches the server over TCP (scram-sha-256).
    public func setPassword(_ password: String, of role: String) throws {
        try psql("ALTER ROLE \"\(role)\" PASSWORD '\(password)'")
    }

    /// Makes a login role for an OS user, as an administrator would for each member.
    public func createRole(_ name: String) throws {
        // Tests run in parallel; two CREATE ROLEs of one name at once would make one fail.
        try Self.roleLock.withLock { _ in try createRoleAlone(name) }
    }

    private static let roleLock = Mutex(0)

    private func createRoleAlone(_ name: String) throws {
        try psql("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(name)') THEN CREATE ROLE \"\(name)\" LOGIN; END IF; END $$")
        try psql("GRANT CREATE, CONNECT ON DATABASE \(database) TO \"\(name)\"; GRANT CREATE ON SCHEMA public TO \"\(name)\"")
    }

    /// The server's own log, for a failing test's message.
    public var serverLog: String {
        (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
    }

    private func runAsServer(_ argv: [String]) throws {
        try run(Self.asUser(Self.serverUser) + argv, capturing: false)
    }

    /// Runs what follows as `user`, in place: setpriv execs, where runuser would fork and, after `pg_ctl start`, wait on a session that never ends.
    private static func asUser(_ user: String) -> [String] {
        ["/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--init-groups", "--"]
    }

    /// Runs a command, returning its standard output; throws with its standard error unless it exits 0.
    /// Runs a command and returns its standard output; throws with its standard error unless it exits 0.
    ///
    /// posix_spawn and waitpid, as `spawn` does: Foundation's Process left an
    /// exited `pg_ctl` unreaped and `waitUntilExit` never returned. Without
    /// `capturing`, standard output goes to /dev/null, so the server that
    /// `pg_ctl start` leaves running holds no pipe of ours.
    @discardableResult
    private func run(_ argv: [String], capturing: Bool = true) throws -> String {
        let errorPath = NSTemporaryDirectory() + "fatchat-pg-stderr-\(UUID().uuidString)"
        defer { unlink(errorPath) }
        let (status, output) = try spawnWaiting(argv, capturing: capturing, errorPath: errorPath)
        guard status == 0 else {
            let problem = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            throw Failure(description: "\(URL(fileURLWithPath: argv[argv.count > 5 ? 5 : 0]).lastPathComponent) failed (status \(status)): \(problem)")
        }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A TCP port on 127.0.0.1 that nothing listens on right now.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw Failure(description: "no free TCP port on 127.0.0.1") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
