import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore

extension MultiProcessTests {
    /// Network mode where it matters: one directory mounted twice through FUSE, so
    /// that the two sides share neither POSIX locks nor page caches.
    ///
    /// `scripts/fuse-mounts.sh` mounts the directory with sshfs (over loopback, to
    /// a throwaway sshd) and with bindfs, twice each. The test is skipped only when
    /// FUSE or those tools are missing, and then it says why.
    @Suite(.startsProcesses, .serialized)
    struct FuseMountTests {
        /// Two mounts of one directory that writers go through; record names start with their labels.
        struct MountPair: Sendable, CustomTestStringConvertible {
            var first: String
            var second: String
            var testDescription: String { "\(first) + \(second)" }
        }

        static let pairs = [
            MountPair(first: "sshfs-a", second: "sshfs-b"),
            MountPair(first: "bindfs-a", second: "bindfs-b"),
            MountPair(first: "sshfs-a", second: "bindfs-b"),
        ]

        @Test("2 writers per mount × 300 records through two FUSE mounts of one directory: exactly 1200",
              .enabled("needs FUSE: /dev/fuse, sshfs, openssh-server, bindfs, fuse3") { FuseMounts.isAvailable() },
              arguments: pairs)
        func writersOnTwoMountsLoseNothing(pair: MountPair) async throws {
            let directory = try TemporaryDirectory()
            let mounts = try await FuseMounts.up(in: directory.url)
            defer { FuseMounts.down(in: directory.url) }

            let first = mounts.appendingPathComponent(pair.first), second = mounts.appendingPathComponent(pair.second)
            #expect(JournalMode.detect(for: first) == .network)
            #expect(JournalMode.detect(for: second) == .network)
            #expect(JournalMode.detect(for: directory.url) == .local)

            let env = ["XDG_DATA_HOME": directory.path("xdg").path]
            let name = "container"
            // Created through the first mount with detection on: it must choose network mode.
            let info = try await Fixture.run(["info", "--container", first.appendingPathComponent(name).path, "--mode", "auto"], environment: env)
            #expect(info.last?.contains("\"mode\":\"network\"") == true, "created in the wrong mode: \(info)")

            let perWriter = 300
            let began = ContinuousClock.now
            var workers: [WorkerProcess] = []
            defer { workers.forEach { $0.killIfRunning() } }
            for (label, mount) in [("a", first), ("b", second)] {
                for index in 0..<2 {
                    workers.append(try WorkerProcess("writer \(label)\(index) on \(mount.lastPathComponent)", [
                        "save", "--container", mount.appendingPathComponent(name).path, "--mode", "auto",
                        "--count", "\(perWriter)", "--prefix", "\(label)\(index)",
                    ], environment: env))
                }
            }
            var expected: Set<String> = []
            for worker in workers {
                let end = try await worker.finish(timeout: .seconds(900))
                #expect(end == .success, "\(worker.name) ended with \(end): \(worker.errorText)")
                #expect(worker.lines.count == perWriter, "\(worker.name) reported \(worker.lines.count) saves")
                expected.formUnion(worker.lines)
            }
            let elapsed = ContinuousClock.now - began
            #expect(expected.count == workers.count * perWriter)

            // Each mount must see all of it: a stale cache on either side would show here.
            for mount in [first, second] {
                let report = try await Fixture.check(container: mount.appendingPathComponent(name).path, mode: nil, directory: directory)
                #expect(report.present.count == workers.count * perWriter, "through \(mount.lastPathComponent)")
                let difference = Fixture.difference(present: report.present, expected: expected)
                #expect(difference.missing.isEmpty, "through \(mount.lastPathComponent), missing: \(difference.missing.prefix(10))")
                #expect(difference.extra.isEmpty, "through \(mount.lastPathComponent), unexpected: \(difference.extra.prefix(10))")
                #expect(report.createdEntries == workers.count * perWriter, "through \(mount.lastPathComponent)")
                #expect(report.duplicated.isEmpty, "through \(mount.lastPathComponent)")
            }
            Fixture.reportFigures("FUSE \(pair.testDescription) 4×\(perWriter)", records: workers.count * perWriter, elapsed: elapsed)
        }
    }

}
