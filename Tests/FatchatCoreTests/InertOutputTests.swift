import Foundation
import ProcessTestKit
import Testing
@testable import FatchatCore
@testable import RecordStore

/// A message as the chat reads it from a record: sent by the account `user`, with these fields.
func plantedMessage(text: String, handle: String, channelName: String = "general", user: String) -> Message? {
    var record = Record(recordType: ChatSchema.messageType)
    record["channel"] = .reference(Reference(recordID: RecordID(recordName: "channel.general"), action: .deleteSelf))
    record["channelName"] = .string(channelName)
    record["text"] = .string(text)
    record["handle"] = .string(handle)
    record.creatorUserRecordID = RecordID(recordName: user)
    record.creationDate = Date(timeIntervalSince1970: 0)
    return Message(record)
}

/// Whatever another member writes into the shared file with `sqlite3`, nothing Fatchat prints
/// (stdout or stderr, plain or JSON, results or errors) carries a raw control to the terminal.
@Suite(.startsProcesses, .serialized) struct InertOutputTests {
    /// ESC-CSI, OSC, a C1 CSI (U+009B), DEL and a right-to-left override, as a hostile member writes them.
    static let hostile = "\u{1B}[31m\u{1B}]0;pwn\u{07}\u{9B}2J\u{7F}\u{202E}"

    /// The first raw control in `text` that a terminal could act on (LF ends lines, and is allowed).
    static func rawControl(in text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first { scalar in
            let v = scalar.value
            return (v < 0x20 && v != 0x0A) || (0x7F..<0xA0).contains(v) || Sanitizer.isBidiControl(v)
        }
    }

    // MARK: The JSON escaper and the formatter

    @Test func jsonEscapesC0C1DelAndBidiAsUnicodeEscapes() throws {
        let quoted = JSONText.quoted("a\u{1B}b\u{9B}c\u{7F}d\u{202E}e\u{2066}f\u{200F}g\u{061C}h\n\"\\/é🍕")
        #expect(quoted == #""a\u001bb\u009bc\u007fd\u202ee\u2066f\u200fg\u061ch\u000a\"\\/é🍕""#)
        let line = JSONText.object(["text": Self.hostile, "n": 3, "ok": true, "list": ["x\u{1B}"], "nan": Double.nan])
        #expect(Self.rawControl(in: line) == nil)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(parsed["text"] as? String == Self.hostile, "any JSON reader gets the text back exactly")
        #expect(parsed["n"] as? Int == 3)
        #expect(parsed["ok"] as? Bool == true)
        #expect(parsed["list"] as? [String] == ["x\u{1B}"])
        #expect(parsed["nan"] is NSNull)
    }

    @Test func formatterLinesAreInertInBothModes() throws {
        let message = try #require(plantedMessage(text: "hi" + Self.hostile, handle: "eve" + Self.hostile,
                                                   channelName: "gen" + Self.hostile, user: "_1009_eve"))
        for json in [false, true] {
            let formatter = EventFormatter(json: json)
            for line in [formatter.message(message), formatter.event("info", ["text": Self.hostile]),
                         formatter.event("members", ["members": [["handle": Self.hostile]]]), formatter.error(Self.hostile),
                         formatter.plain(Self.hostile)] {
                #expect(Self.rawControl(in: line) == nil, "json: \(json), line: \(line.debugDescription)")
            }
        }
        #expect(EventFormatter(json: false).message(message).contains("hi^[[31m^[]0;pwn^G<9b>2J^?"))
    }

    // MARK: The real binary on a file planted with sqlite3

    /// A container made by `fatchat init` in a temporary directory, with root's private data beside it.
    final class Planted: Sendable {
        let root = URL(fileURLWithPath: "/tmp/fatchat-inert-\(UUID().uuidString)")
        var container: String { root.appendingPathComponent("chat").path }
        var database: String { container + "/public.sqlite" }

        init() async throws {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            _ = try await run(["init", container])
            _ = try await run(["post", "--container", container, "general", "hello"])
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        /// Runs `fatchat ARGS` to the end, with `input` on stdin.
        func run(_ arguments: [String], input: String? = nil) async throws -> WorkerProcess {
            let process = try WorkerProcess(arguments.first ?? "fatchat", executable: "fatchat", arguments,
                                            environment: ["XDG_DATA_HOME": root.appendingPathComponent("data").path, "NO_COLOR": "1"],
                                            input: try input.map(WorkerProcess.input))
            _ = try await process.finish(timeout: .seconds(120))
            return process
        }

        /// Runs SQL with the real `sqlite3` command, as a member of the group could.
        func sqlite(_ sql: String) throws {
            let process = try SpawnedProcess(["/usr/bin/sqlite3", database], stdin: .pipe)
            process.input?.write(Data(sql.utf8))
            try process.input?.close()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "sqlite3 ran the planted SQL")
        }
    }

    /// Everything a run printed, stdout and stderr, must be free of raw controls.
    private func expectInert(_ process: WorkerProcess, sourceLocation: SourceLocation = #_sourceLocation) {
        let all = process.lines.joined(separator: "\n") + "\n" + process.errorText
        #expect(Self.rawControl(in: all) == nil, "\(process.name) printed a raw control: \(all.debugDescription)",
                sourceLocation: sourceLocation)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs the sqlite3 command"))
    func adminOutputOfPlantedNamesTypesKeysAndHashesIsInert() async throws {
        let planted = try await Planted()
        let h = "char(27) || '[31m' || char(27) || ']0;pwn' || char(7) || char(155) || '2J' || char(127) || char(8238)"
        try planted.sqlite("""
            UPDATE record SET name = name || \(h) WHERE type = 'Message';
            INSERT INTO record (zone, name, type, fields, created, modified, creator, modifier, tag)
                SELECT zone, 'evil' || \(h), 'Evil' || \(h),
                       '{"k\\u001b[1m\\u009b\\u202e":{"t":"s","v":"v\\u001b[5m\\u007f"}}', created, modified, creator, modifier, tag
                FROM record WHERE type = 'Channel';
            INSERT INTO asset_use (hash, record) SELECT 'ab' || \(h), id FROM record WHERE type = 'Channel';
            """)

        let types = try await planted.run(["admin", "types", "--container", planted.container])
        expectInert(types)
        #expect(types.lines.contains { $0.hasPrefix("Evil^[[31m^[]0;pwn^G<9b>2J^?") }, "the planted type is listed, inert: \(types.lines)")
        #expect(types.lines.contains { $0.contains("k^[[1m<9b>") }, "the planted key is listed, inert")

        let query = try await planted.run(["admin", "query", "--container", planted.container, "Message"])
        expectInert(query)
        #expect(query.lines.contains { $0.contains("^[[31m") }, "\(query.lines)")

        let evil = try await planted.run(["admin", "query", "--container", planted.container, "Evil" + Self.hostile])
        expectInert(evil)

        let json = try await planted.run(["admin", "query", "--container", planted.container, "Message", "--json"])
        expectInert(json)
        let line = try #require(json.lines.first)
        #expect(line.contains(#"\u001b[31m"#) && line.contains(#"\u009b"#) && line.contains(#"\u007f"#) && line.contains(#"\u202e"#), "\(line)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect((object["recordName"] as? String)?.hasSuffix("\u{1B}[31m\u{1B}]0;pwn\u{07}\u{9B}2J\u{7F}\u{202E}") == true)

        let check = try await planted.run(["admin", "check", "--container", planted.container])
        expectInert(check)
        #expect(check.lines.contains { $0.contains("ab^[[31m") }, "the planted hash is reported, inert: \(check.lines) \(check.errorText)")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs the sqlite3 command"))
    func aTriggersRaiseMessageIsInertInEveryError() async throws {
        let planted = try await Planted()
        try planted.sqlite("""
            CREATE TRIGGER "evil\u{1B}[2J" BEFORE INSERT ON record BEGIN SELECT RAISE(ABORT, 'stop\(Self.hostile)here'); END;
            """)

        // A new channel is created at once, so the trigger's message comes back as the command's error.
        let post = try await planted.run(["post", "--container", planted.container, "newchannel", "blocked", "--timeout", "3"])
        expectInert(post)
        #expect(post.errorText.hasPrefix("fatchat: "), "\(post.errorText)")

        let plainBot = try await planted.run(["bot", "--container", planted.container, "--drain-timeout", "1"], input: "/create other\n")
        expectInert(plainBot)
        #expect(!plainBot.errorText.isEmpty)

        let jsonBot = try await planted.run(["bot", "--container", planted.container, "--json", "--drain-timeout", "1"],
                                            input: #"{"cmd":"create","channel":"third"}"# + "\n")
        expectInert(jsonBot)
        let errors = jsonBot.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["type"] as? String == "error" }
        #expect(!errors.isEmpty, "\(jsonBot.lines)")
    }

    @Test func messageTextWithControlsIsInertInReadAndEscapedInJSON() async throws {
        let planted = try await Planted()
        _ = try await planted.run(["post", "--container", planted.container, "general", "look" + Self.hostile])
        let plain = try await planted.run(["read", "--container", planted.container, "general"])
        expectInert(plain)
        #expect(plain.lines.contains { $0.hasSuffix("look^[[31m^[]0;pwn^G<9b>2J^?") }, "\(plain.lines)")

        let json = try await planted.run(["read", "--container", planted.container, "general", "--json"])
        expectInert(json)
        #expect(json.lines.contains { $0.contains(#"look\u001b[31m\u001b]0;pwn\u0007\u009b2J\u007f\u202e"#) }, "\(json.lines)")
    }
}
