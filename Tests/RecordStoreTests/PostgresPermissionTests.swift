import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore

extension MultiProcessTests {
    /// Row-level security with two real OS users, each reaching the server as the role of their own name (peer authentication).
    @Suite(.startsProcesses, .serialized, .enabled(if: PostgresCluster.shouldRun, "\(PostgresCluster.unavailableReason ?? "")"))
    struct PostgresPermissionTests {
        static let alice = "fatchat-pg-alice"
        static let bob = "fatchat-pg-bob"

        @Test("psql as bob can neither update, delete nor forge alice's message; alice can change her own")
        func serverRefusesAnotherRolesChanges() async throws {
            let alice = try OSUser.ensure(Self.alice), bob = try OSUser.ensure(Self.bob)
            let cluster = try PostgresCluster()
            defer { cluster.stop() }
            for role in ["root", alice.name, bob.name] { try cluster.createRole(role) }

            // Root makes the container and the schema, as an administrator would; members only use it.
            let directory = try TemporaryDirectory()
            let containerPath = directory.path("container")
            chmod(directory.url.path, 0o755)
            var options = Container.Options(privateDataDirectory: directory.path("root-data"))
            options.engine = .postgresql
            options.postgresURL = cluster.url
            _ = try Container.create(at: containerPath, access: .owner(readableByOthers: true), options: options)

            let aliceData = try directory.homeFor(alice, "alice-data"), bobData = try directory.homeFor(bob, "bob-data")
            _ = try await Fixture.run(["save", "--container", containerPath.path, "--count", "1", "--prefix", "hello"],
                                      launcher: alice.launcher(dataHome: aliceData))
            let stored = try cluster.psql("SELECT owner || ' ' || creator || ' ' || (fields -> 'writer' ->> 'v') FROM fatchat.record WHERE name = 'hello-0'")
            #expect(stored == "\(alice.name) _\(alice.uid)_\(alice.name) hello")

            // Bob's client refuses before it asks; the server refuses when he goes around the client.
            let refused = try WorkerProcess("modify as bob", ["modify", "--container", containerPath.path, "--name", "hello-0", "--key", "writer", "--value", "bob"],
                                            launcher: bob.launcher(dataHome: bobData))
            defer { refused.killIfRunning() }
            let end = try await refused.finish(timeout: .seconds(60))
            #expect(end == WorkerProcess.Termination(status: 77, signaled: false), "\(end): \(refused.errorText)")

            func count(_ sql: String, as user: String) throws -> String {
                try cluster.psql("WITH done AS (\(sql) RETURNING 1) SELECT count(*) FROM done", as: user)
            }
            #expect(try count("UPDATE fatchat.record SET fields = '{\"writer\": {\"t\": \"s\", \"v\": \"bob\"}}' WHERE name = 'hello-0'", as: bob.name) == "0")
            #expect(try count("DELETE FROM fatchat.record WHERE name = 'hello-0'", as: bob.name) == "0")
            #expect(try count("DELETE FROM fatchat.reference", as: bob.name) == "0")
            // A record claiming alice as its creator, a change-log entry saying her message was deleted, a cascade on a live target: all refused.
            #expect(throws: PostgresCluster.Failure.self) {
                try cluster.psql("""
                    INSERT INTO fatchat.record (zone, name, type, fields, created, modified, creator, modifier, tag)
                    VALUES ('_defaultZone', 'forged', 'Item', '{}', 0, 0, '_\(alice.uid)_\(alice.name)', '_\(alice.uid)_\(alice.name)', 'x')
                    """, as: bob.name)
            }
            #expect(throws: PostgresCluster.Failure.self) {
                try cluster.psql("INSERT INTO fatchat.change (zone, name, type, kind, at) VALUES ('_defaultZone', 'hello-0', 'Item', 2, 0)", as: bob.name)
            }
            #expect(try cluster.psql("SELECT fatchat.remove_orphan('_defaultZone', 'hello-0') IS NULL", as: bob.name) == "t")
            #expect(throws: PostgresCluster.Failure.self) { try cluster.psql("ALTER TABLE fatchat.record DISABLE ROW LEVEL SECURITY", as: bob.name) }
            #expect(try cluster.psql("SELECT fields -> 'writer' ->> 'v' FROM fatchat.record WHERE name = 'hello-0'") == "hello")

            // Alice may change and delete her own, through her client or psql alike.
            _ = try await Fixture.run(["modify", "--container", containerPath.path, "--name", "hello-0", "--key", "writer", "--value", "edited"],
                                      launcher: alice.launcher(dataHome: aliceData))
            #expect(try cluster.psql("SELECT fields -> 'writer' ->> 'v' FROM fatchat.record WHERE name = 'hello-0'") == "edited")
            #expect(try count("DELETE FROM fatchat.record WHERE name = 'hello-0'", as: alice.name) == "1")
        }
    }
}
