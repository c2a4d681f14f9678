import Foundation
import ProcessTestKit
import RecordStore
import Testing
@testable import FatchatCore

/// `fatchat read --last N` pages through the channel itself, whatever N is.
@Suite(.startsProcesses, .serialized) struct ReadExportTests {
    static let count = 12_345

    /// A container whose #general holds `count` messages, saved 400 to a commit so that many share a creation date.
    private func seeded() throws -> (sandbox: ChatSandbox, container: String) {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        defer { client.engine.stop() }
        let name = try ChannelName("general")
        try client.createChannel(name)
        let records = (0..<Self.count).map { Message.record(text: String(format: "line %05d", $0), handle: "seeder", in: name) }
        for start in stride(from: 0, to: records.count, by: RecordDatabase.maximumBatchSize) {
            let batch = Array(records[start..<min(start + RecordDatabase.maximumBatchSize, records.count)])
            let result = try client.container.publicDatabase.modifyRecords(saving: batch, deleting: [])
            #expect(result.partialFailure == nil)
        }
        return (sandbox, sandbox.root.appendingPathComponent("container").path)
    }

    private func read(_ container: String, _ arguments: [String]) async throws -> WorkerProcess {
        let read = try WorkerProcess("read", executable: "fatchat", ["read", "--container", container, "general"] + arguments,
                                     environment: ["XDG_DATA_HOME": NSTemporaryDirectory() + "fatchat-read-\(UUID().uuidString)"])
        #expect(try await read.finish(timeout: .seconds(300)) == .success, "\(read.errorText)")
        return read
    }

    private func texts(_ process: WorkerProcess) -> [String] {
        process.lines.compactMap { line in line.range(of: "line ").map { String(line[$0.lowerBound...]) } }
    }

    @Test func moreThanAPageOfTenThousandIsPrintedWholeOldestFirst() async throws {
        let (sandbox, container) = try seeded()
        _ = sandbox
        let all = try await read(container, ["--last", "25000"])
        #expect(all.lines.count == Self.count)
        #expect(texts(all) == (0..<Self.count).map { String(format: "line %05d", $0) })
    }

    @Test func aCountInsideTheHistoryStartsAtExactlyThatMessage() async throws {
        let (sandbox, container) = try seeded()
        _ = sandbox
        // 10,501 ends inside a batch of 400 that share one creation date.
        let tail = try await read(container, ["--last", "10501", "--json"])
        #expect(texts(tail).map { $0.prefix(10) } == (Self.count - 10_501..<Self.count).map { Substring(String(format: "line %05d", $0)) })
        let few = try await read(container, ["--last", "3"])
        #expect(texts(few) == (Self.count - 3..<Self.count).map { String(format: "line %05d", $0) })
    }
}
