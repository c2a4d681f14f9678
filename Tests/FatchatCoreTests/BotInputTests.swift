import Foundation
import Testing
@testable import FatchatCore

@Suite struct BotInputTests {
    @Test func jsonCommandsHaveOneShapeEach() throws {
        #expect(try BotInput.json(Array(#"{"cmd":"post","channel":"general","text":"hi"}"#.utf8)) == .post(channel: "general", text: "hi"))
        #expect(try BotInput.json(Array(#"{"cmd":"post","text":"to current"}"#.utf8)) == .post(channel: nil, text: "to current"))
        #expect(try BotInput.json(Array(#"{"cmd":"edit","id":"abcd","text":"new"}"#.utf8)) == .edit(message: "abcd", text: "new"))
        #expect(try BotInput.json(Array(#"{"cmd":"channels"}"#.utf8)) == .channels)
        #expect(try BotInput.json(Array(#"{"cmd":"post","channel":"g","text":"nul \u0000 inside"}"#.utf8)) == .post(channel: "g", text: "nul \u{0} inside"))
    }

    @Test func jsonCommandsForRepliesReactionsActionsAndHighlights() throws {
        #expect(try BotInput.json(Array(#"{"cmd":"reply","id":"3f9a","text":"yes"}"#.utf8)) == .reply(message: "3f9a", text: "yes"))
        #expect(try BotInput.json(Array(#"{"cmd":"react","id":"3f9a","emoji":"👍"}"#.utf8)) == .react(message: "3f9a", reaction: "👍"))
        #expect(try BotInput.json(Array(#"{"cmd":"unreact","id":"3f9a","emoji":"+1"}"#.utf8)) == .unreact(message: "3f9a", reaction: "+1"))
        #expect(try BotInput.json(Array(#"{"cmd":"reactions","id":"3f9a"}"#.utf8)) == .reactions(message: "3f9a"))
        #expect(try BotInput.json(Array(#"{"cmd":"me","text":"waves"}"#.utf8)) == .action(channel: nil, text: "waves"))
        #expect(try BotInput.json(Array(#"{"cmd":"highlight","action":"add","word":"deploy"}"#.utf8)) == .highlight(.add("deploy")))
        #expect(try BotInput.json(Array(#"{"cmd":"highlight","action":"list"}"#.utf8)) == .highlight(.list))
        #expect(throws: CommandError.self) { try BotInput.json(Array(#"{"cmd":"highlight","action":"add"}"#.utf8)) }
    }

    @Test(arguments: [
        (#"[1,2]"#, "must be a JSON object"),
        (#""just a string""#, "must be a JSON object"),
        (#"{"cmd":"post","text":"x","colour":"red"}"#, "no field \"colour\""),
        (#"{"cmd":"post"}"#, "needs \"text\""),
        (#"{"text":"no cmd"}"#, "no \"cmd\""),
        (#"{"cmd":"dance"}"#, "Unknown cmd \"dance\""),
        (#"{"cmd":"post","text":42}"#, "must be a string"),
        (#"{"cmd":"post","text":"unterminated"#, "Not valid JSON"),
    ])
    func badJSONGetsAClearError(line: String, expected: String) {
        let error = #expect(throws: CommandError.self) { try BotInput.json(Array(line.utf8)) }
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }

    @Test func invalidUTF8IsRefusedNotRepaired() {
        let bytes: [UInt8] = Array("caf".utf8) + [0xC3, 0x28] + Array(" au lait".utf8)
        let error = #expect(throws: CommandError.self) { try BotInput.plain(bytes) }
        #expect(error?.message.contains("UTF-8") == true)
        #expect(throws: CommandError.self) { try BotInput.json([0x7B, 0xFF, 0x7D]) }
    }

    @Test func aHugeLineIsRefusedAndTheNextLinesSurvive() {
        var splitter = LineSplitter(limit: 1_048_576)
        var pieces = splitter.feed(Array("first\n".utf8))
        let huge = [UInt8](repeating: UInt8(ascii: "x"), count: 2 * 1_048_576)
        for start in stride(from: 0, to: huge.count, by: 65_536) {
            pieces += splitter.feed(huge[start..<min(start + 65_536, huge.count)])
        }
        pieces += splitter.feed(Array("\nafter\r\nlast without newline".utf8))
        pieces += splitter.finish()
        #expect(pieces == [
            .line(Array("first".utf8)), .tooLong(2 * 1_048_576), .line(Array("after".utf8)), .line(Array("last without newline".utf8)),
        ])
    }

    @Test func formatterMakesOtherPeoplesTextInert() {
        #expect(Sanitizer.inert("a\u{1B}[2Jb\rc\u{7}") == "a^[[2Jb^Mc^G")
        // The same rules as the full-screen client: C1 controls in hex, bidi overrides and lone format characters dropped.
        #expect(Sanitizer.inert("\u{9B}31m \u{202E}rev") == "<9b>31m rev")
        #expect(Sanitizer.inert("zero\u{200B}width") == "zerowidth")
        #expect(Sanitizer.inert("你好 🍕") == "你好 🍕")
        let line = EventFormatter(json: false).event("info", ["text": "a\u{1B}]0;owned\u{7}b\u{202E}c"])
        #expect(line == "-- a^[]0;owned^Gbc")
    }

    @Test func handleColoursAreStable() {
        #expect(HandleColor.of(userID: "_1000_alice") == HandleColor.of(userID: "_1000_alice"))
        #expect(HandleColor.ansi(for: "_1000_alice").hasSuffix(String(HandleColor.of(userID: "_1000_alice") % 8)))
        let colours = Set((0..<50).map { HandleColor.of(userID: "user\($0)") })
        #expect(colours.count > 6)
    }
}
