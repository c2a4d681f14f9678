import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore

/// Many real processes writing one container at once, in both journal modes.
@Suite(.startsProcesses, .serialized)
struct MultiProcessTests {
    @Test("8 processes × 500 records at once: exactly 4000, none duplicated", arguments: JournalMode.allCases)
    func eightWritersSaveEveryRecordOnce(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let container = directory.path("container").path
        let writers = 8, perWriter = 500
        let began = ContinuousClock.now
        // All eight also race to create the container: that has to be safe too.
        let workers = try (0..<writers).map { index in
            try WorkerProcess("writer \(index)", [
                "save", "--container", container, "--mode", mode.rawValue,
                "--count", "\(perWriter)", "--prefix", "w\(index)",
            ], environment: ["XDG_DATA_HOME": directory.path("xdg").path])
        }
        defer { workers.forEach { $0.killIfRunning() } }
        for worker in workers {
            let end = try await worker.finish(timeout: .seconds(900))
            #expect(end == .success, "\(worker.name) ended with \(end): \(worker.errorText)")
        }
        let elapsed = ContinuousClock.now - began

        var expected: Set<String> = []
        for (index, worker) in workers.enumerated() {
            let names = (0..<perWriter).map { "w\(index)-\($0)" }
            #expect(worker.lines == names, "\(worker.name) reported \(worker.lines.count) of \(perWriter) saves, or out of order")
            expected.formUnion(names)
        }
        let report = try await Fixture.check(container: container, mode: mode, directory: directory)
        #expect(report.present.count == writers * perWriter)
        let difference = Fixture.difference(present: report.present, expected: expected)
        #expect(difference.missing.isEmpty, "missing: \(difference.missing.prefix(10))")
        #expect(difference.extra.isEmpty, "unexpected: \(difference.extra.prefix(10))")
        #expect(report.createdEntries == writers * perWriter)
        #expect(report.duplicated.isEmpty)
        Fixture.reportFigures("\(writers)×\(perWriter) \(mode.rawValue)", records: writers * perWriter, elapsed: elapsed)
    }

    @Test("A writer killed with SIGKILL keeps every save it reported; the file opens and writing goes on", arguments: JournalMode.allCases)
    func killedWriterLosesNothingItReported(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let container = directory.path("container").path
        let env = ["XDG_DATA_HOME": directory.path("xdg").path]
        try await Fixture.run(["info", "--container", container, "--mode", mode.rawValue], environment: env)

        // A steady writer keeps the lock contended while the victim dies.
        let steady = try WorkerProcess("steady writer", [
            "save", "--container", container, "--mode", mode.rawValue, "--count", "300", "--prefix", "steady",
        ], environment: env)
        let victim = try WorkerProcess("victim", [
            "save", "--container", container, "--mode", mode.rawValue, "--count", "1000000", "--prefix", "victim",
        ], environment: env)
        defer { steady.killIfRunning(); victim.killIfRunning() }

        let started = await victim.waitForLines(150, timeout: .seconds(300))
        #expect(started, "the victim never reported 150 saves: \(victim.errorText)")
        victim.signal(SIGKILL)
        let victimEnd = try await victim.finish(timeout: .seconds(30))
        #expect(victimEnd == WorkerProcess.Termination(status: SIGKILL, signaled: true))
        let reported = victim.lines
        #expect(reported == (0..<reported.count).map { "victim-\($0)" })

        let steadyEnd = try await steady.finish(timeout: .seconds(600))
        #expect(steadyEnd == .success, "the steady writer failed: \(steady.errorText)")

        // A new writer must get through, even past a lock the victim may have left behind.
        try await Fixture.run(["save", "--container", container, "--mode", mode.rawValue, "--count", "50", "--prefix", "after"],
                              environment: env, timeout: .seconds(300))

        let report = try await Fixture.check(container: container, mode: mode, directory: directory)
        let present = Set(report.present)
        let missing = reported.filter { !present.contains($0) }
        #expect(missing.isEmpty, "saves the victim reported are gone: \(missing.prefix(10))")
        // At most one more commit can have landed between the save returning and the name being printed.
        let victimPresent = present.filter { $0.hasPrefix("victim-") }
        #expect(victimPresent.count == reported.count || victimPresent.count == reported.count + 1)
        #expect(victimPresent == Set((0..<victimPresent.count).map { "victim-\($0)" }))
        #expect(present.filter { $0.hasPrefix("steady-") }.count == 300)
        #expect(present.filter { $0.hasPrefix("after-") }.count == 50)
        #expect(report.duplicated.isEmpty)
        #expect(report.createdEntries == report.present.count)
        print("figures: SIGKILL \(mode.rawValue): victim reported \(reported.count), \(victimPresent.count) present")
    }
}

/// Running workers to completion and reading what they found.
enum Fixture {
    /// What `store-worker check` prints.
    struct CheckReport: Decodable {
        var present: [String]
        var createdEntries: Int
        var duplicated: [String]
    }

    /// Runs a worker to its end, expecting success; returns its stdout lines.
    @discardableResult
    static func run(_ arguments: [String], launcher: [String] = [], environment: [String: String] = [:],
                    timeout: Duration = .seconds(120)) async throws -> [String] {
        let worker = try WorkerProcess(arguments.prefix(2).joined(separator: " "), arguments, launcher: launcher, environment: environment)
        defer { worker.killIfRunning() }
        let end = try await worker.finish(timeout: timeout)
        guard end == .success else {
            throw WorkerProcess.Failure(description: "`store-worker \(arguments.joined(separator: " "))` ended with \(end): \(worker.errorText)")
        }
        return worker.lines
    }

    /// Runs `store-worker check` on a container.
    static func check(container: String, mode: JournalMode?, directory: TemporaryDirectory, type: String = "Item") async throws -> CheckReport {
        let lines = try await run(["check", "--container", container, "--mode", mode?.rawValue ?? "auto", "--type", type],
                                  environment: ["XDG_DATA_HOME": directory.path("xdg").path], timeout: .seconds(300))
        guard let json = lines.last else {
            throw WorkerProcess.Failure(description: "`store-worker check` printed nothing.")
        }
        return try JSONDecoder().decode(CheckReport.self, from: Data(json.utf8))
    }

    /// Names expected but absent, and names present but never expected, sorted.
    static func difference(present: [String], expected: Set<String>) -> (missing: [String], extra: [String]) {
        let presentSet = Set(present)
        return (expected.subtracting(presentSet).sorted(), presentSet.subtracting(expected).sorted())
    }

    /// Prints a throughput figure for the closing notes; timing never decides a test.
    static func reportFigures(_ label: String, records: Int, elapsed: Duration) {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(String(format: "figures: %@: %d records in %.1f s, %.0f records/s", label, records, seconds, Double(records) / max(seconds, 0.001)))
    }
}
