import Foundation
import ProcessTestKit
import Testing

/// Every input with which a fuzz target of `scripts/fuzz.sh` made a decoder trap, replayed.
///
/// Each input runs in a child process, the `FatchatFuzz` replayer, so that a
/// decoder that still traps fails its own test rather than ending the whole
/// test run. The replayer prints one line per input saying what the decoder
/// did; a fixed decoder refuses the input with a thrown error (or, for the
/// change log, may also skip the row it cannot read).
@Suite(.startsProcesses) struct FuzzRegressionTests {
    /// One crash input, as the fuzz target's own input format spells it (see `Sources/FatchatFuzz`).
    struct Finding: CustomTestStringConvertible, Sendable {
        var target: String
        var name: String
        var input: String
        /// Where the trap was, when the input was found.
        var trap: String

        var testDescription: String { "\(target) \(name)" }
    }

    /// Change rows written into a schema without NOT NULL (a member rewrote it): a NULL where
    /// `SQLiteAccess.changes(after:)` or `decodeRecord` reads a non-optional value is a GRDB
    /// `try!` trap ("could not decode String from database value NULL", GRDB/Core/Row.swift:418).
    static let nullColumns: [Finding] = {
        let change = "tz\u{1F}tm\u{1F}tT\u{1F}i0\u{1F}n\u{1F}r1"
        // The record's columns after the change's: type, fields, created, modified, creator, modifier, tag.
        func record(nullAt index: Int) -> String {
            var columns = ["tT", "t{}", "r1", "r1", "tu", "tu", "t1"]
            columns[index] = "n"
            return change + "\u{1F}" + columns.joined(separator: "\u{1F}")
        }
        return [
            Finding(target: "change-rows-any-schema", name: "change.zone NULL", input: "n",
                    trap: "SQLiteStorage.swift:105 row[1] (ZoneID)"),
            Finding(target: "change-rows-any-schema", name: "change.name NULL", input: "tz\u{1F}n",
                    trap: "SQLiteStorage.swift:105 row[2] (RecordID)"),
            Finding(target: "change-rows-any-schema", name: "change.type NULL", input: "tz\u{1F}tm\u{1F}n",
                    trap: "SQLiteStorage.swift:113 row[3] (recordType)"),
            Finding(target: "change-rows-any-schema", name: "change.kind NULL", input: "tz\u{1F}tm\u{1F}tT\u{1F}n",
                    trap: "SQLiteStorage.swift:114 row[4] (kind)"),
            Finding(target: "change-rows-any-schema", name: "change.at NULL", input: "tz\u{1F}tm\u{1F}tT\u{1F}i0\u{1F}n\u{1F}n",
                    trap: "SQLiteStorage.swift:116 row[6] (date)"),
            Finding(target: "change-rows-any-schema", name: "record.type NULL", input: record(nullAt: 0),
                    trap: "SQLiteStorage.swift:58 row[first] (decodeRecord, Record(stored:))"),
            Finding(target: "change-rows-any-schema", name: "record.fields NULL", input: record(nullAt: 1),
                    trap: "SQLiteStorage.swift:57 row[first + 1] (decodeRecord, FieldCoding.decode)"),
            Finding(target: "change-rows-any-schema", name: "record.created NULL", input: record(nullAt: 2),
                    trap: "SQLiteStorage.swift:59 row[first + 2] (decodeRecord, creationDate)"),
            Finding(target: "change-rows-any-schema", name: "record.modified NULL", input: record(nullAt: 3),
                    trap: "SQLiteStorage.swift:60 row[first + 3] (decodeRecord, modificationDate)"),
            Finding(target: "change-rows-any-schema", name: "record.creator NULL", input: record(nullAt: 4),
                    trap: "SQLiteStorage.swift:61 row[first + 4] (decodeRecord, creatorUserRecordID)"),
            Finding(target: "change-rows-any-schema", name: "record.modifier NULL", input: record(nullAt: 5),
                    trap: "SQLiteStorage.swift:62 row[first + 5] (decodeRecord, lastModifiedUserRecordID)"),
        ]
    }()

    @Test(arguments: nullColumns)
    func decoderRefusesWithoutTrapping(_ finding: Finding) async throws {
        guard let outcome = try await replay(finding) else { return }
        #expect(outcome.hasPrefix("threw:") || outcome.hasPrefix("read "),
                "\(finding.target) \(finding.name): \(outcome)")
    }

    /// Runs the replayer on the input; returns what it printed about it, or nil after recording how it trapped.
    private func replay(_ finding: Finding) async throws -> String? {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-regression-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("input")
        try Data(finding.input.utf8).write(to: file)
        let replayer = try WorkerProcess("fuzz-replay", executable: "FatchatFuzz", [finding.target, file.path],
                                         environment: ["SWIFT_BACKTRACE": "enable=yes,interactive=no,color=no,registers=none,images=none"])
        let termination = try await replayer.finish(timeout: .seconds(60))
        guard termination == .success else {
            Issue.record("\(finding.target) \(finding.name) still traps (found at \(finding.trap)); it ended with \(termination):\n\(replayer.errorText)")
            return nil
        }
        let prefix = file.path + ": "
        return replayer.lines.first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) } ?? "(no outcome printed)"
    }
}
