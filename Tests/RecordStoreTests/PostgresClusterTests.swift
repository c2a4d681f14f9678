import Foundation
import ProcessTestKit
import Testing

/// The throwaway cluster the PostgreSQL tests run against: it starts, answers on its socket, and leaves nothing behind.
@Suite(.startsProcesses, .enabled(if: PostgresCluster.shouldRun, "\(PostgresCluster.unavailableReason ?? "")"))
struct PostgresClusterTests {
    @Test("A cluster answers on its Unix socket as the superuser and as a role made for an OS user, and stop removes it")
    func startsAnswersAndStops() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        #expect(try cluster.psql("SELECT 40 + 2") == "42")
        #expect(try cluster.psql("SHOW listen_addresses") == "127.0.0.1")
        #expect(try cluster.psql("SHOW port") == String(cluster.port))

        // Root gets a role of its own name through peer authentication, and no more than it was given.
        try cluster.createRole("root")
        #expect(try cluster.psql("SELECT current_user", as: "root") == "root")
        #expect(throws: PostgresCluster.Failure.self) { try cluster.psql("CREATE ROLE intruder SUPERUSER", as: "root") }

        // Killed and started again, it still has its database.
        try cluster.psql("CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)")
        try cluster.kill()
        #expect(throws: PostgresCluster.Failure.self) { try cluster.psql("SELECT 1") }
        try cluster.start()
        #expect(try cluster.psql("SELECT n FROM kept") == "7")

        cluster.stop()
        #expect(!FileManager.default.fileExists(atPath: cluster.directory))
    }
}
