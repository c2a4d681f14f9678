import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore

/// An append to a client's own log that fails part-way, on a real filesystem that then refuses to
/// have the file cut back too. A GlusterFS mount whose server goes away does both at once: a write
/// lands in part, and the `ftruncate` meant to take it back fails with EBADFD. Here a small tmpfs
/// runs out of space in the middle of the write, and the file's append-only attribute refuses the cut.
@Suite(.serialized)
struct LogAppendFailureTests {
    /// The flag `chattr +a` sets, and the ioctls that read and set a file's flags (linux/fs.h).
    static let appendOnly: Int32 = 0x20
    static let getFlags: UInt = 0x8008_6601
    static let setFlags: UInt = 0x4008_6602

    static func setAppendOnly(_ path: String, _ on: Bool) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError(.internalError, "cannot open \(path)") }
        defer { close(fd) }
        var flags: Int32 = 0
        guard ioctl(fd, getFlags, &flags) == 0 else { throw StoreError(.internalError, "cannot read the flags of \(path): \(errno)") }
        flags = on ? flags | appendOnly : flags & ~appendOnly
        guard ioctl(fd, setFlags, &flags) == 0 else { throw StoreError(.internalError, "cannot set the flags of \(path): \(errno)") }
    }

    /// Whether this machine can make the failure: root that may mount a tmpfs, on a kernel (6.0 or later)
    /// that sets the append-only attribute there. Elsewhere the test is skipped, and says why.
    static let canMakeTheFailure: Bool = {
        guard geteuid() == 0 else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("fatchat-probe-\(UUID().uuidString)")
        guard (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)) != nil else { return false }
        defer { try? FileManager.default.removeItem(at: probe) }
        guard (try? run(["/bin/mount", "-t", "tmpfs", "-o", "size=64k", "fatchat-probe", probe.path])) != nil else { return false }
        defer { try? run(["/bin/umount", "-l", probe.path]) }
        let file = probe.appendingPathComponent("file").path
        guard FileManager.default.createFile(atPath: file, contents: nil), (try? setAppendOnly(file, true)) != nil else { return false }
        try? setAppendOnly(file, false)
        return true
    }()

    static func run(_ argv: [String]) throws {
        let process = try SpawnedProcess(argv)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw WorkerProcess.Failure(description: "\(argv.joined(separator: " ")) exited \(process.terminationStatus)")
        }
    }

    func message(_ name: String, text: String) -> RecordStore.Record {
        var record = RecordStore.Record(recordType: "Message", recordID: RecordID(recordName: name))
        record["text"] = .string(text)
        return record
    }

    @Test("An append that fails part-way and cannot be cut back hides nothing: the same client's next save reaches a fresh reader, and the log reads whole",
          .enabled(if: canMakeTheFailure, "needs root to mount a small tmpfs, and a kernel that sets the append-only attribute there (6.0 or later)"))
    func aTornAppendThatCouldNotBeCutHidesNoLaterSave() throws {
        let directory = try TemporaryDirectory()
        let small = directory.path("small")
        try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
        try Self.run(["/bin/mount", "-t", "tmpfs", "-o", "size=512k,mode=0755", "fatchat-test", small.path])
        defer { try? Self.run(["/bin/umount", "-l", small.path]) }
        func client(_ name: String) throws -> Container {
            var options = Container.Options(privateDataDirectory: directory.path(name))
            options.engine = .log
            return try Container(url: small.appendingPathComponent("container"), options: options)
        }

        let writer = try client("private-writer")
        let before = try (0..<3).map { try writer.publicDatabase.save(message("before-\($0)", text: "sent before the disk filled")) }
        let folder = small.appendingPathComponent("container/logs/\(writer.currentUser.recordID.recordName)")
        let logs = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".log") }
        try #require(logs.count == 1)
        let log = folder.appendingPathComponent(logs[0]).path

        // Leave a few pages free, then send more than fits: the write lands in part, and the cut is refused.
        var space = statvfs()
        try #require(statvfs(small.path, &space) == 0)
        let free = Int(space.f_bavail) * Int(space.f_frsize)
        try #require(FileManager.default.createFile(atPath: small.appendingPathComponent("filler").path, contents: Data(count: free - 3 * 4096)))
        try Self.setAppendOnly(log, true)
        let sizeBefore = try FileStatusOf(log).size
        let big = (0..<40).map { message("lost-\($0)", text: String(repeating: "x", count: 4_000)) }
        let failed = try? writer.publicDatabase.modifyRecords(saving: big, deleting: [])
        #expect(failed == nil || failed?.partialFailure != nil, "the batch did not fit, so it cannot all have been saved")
        #expect(try FileStatusOf(log).size > sizeBefore, "the failed write left part of itself in the log")

        // The disk has room again and the file may be cut; the same client, still running, saves once more.
        try Self.setAppendOnly(log, false)
        try FileManager.default.removeItem(at: small.appendingPathComponent("filler"))
        let after = try writer.publicDatabase.save(message("after", text: "sent once there was room"))

        let reader = try client("private-reader")
        _ = try reader.refreshPublicDatabase()
        let names = Set(try reader.publicDatabase.records(matching: Query(recordType: "Message")).records.map(\.recordID.recordName))
        for saved in before + [after] {
            #expect(names.contains(saved.recordID.recordName), "\(saved.recordID.recordName) was saved, yet a new reader does not have it")
        }
        let scan = try #require(LogFixture.readBack(log), "the log's header no longer reads").scan
        #expect(scan.stop == .caughtUp, "the log holds bytes that are not whole entries: \(scan.stop)")
        #expect(scan.entries.last?.recordID.recordName == "after")
    }
}
