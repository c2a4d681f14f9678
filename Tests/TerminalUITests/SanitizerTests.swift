import Testing
@testable import TerminalUI
@testable import FatchatCore

@Suite struct SanitizerTests {
    @Test func escapeAndCarriageReturnBecomeCaretNotation() {
        #expect(Sanitizer.inert("a\u{1B}[2Jb") == "a^[[2Jb")
        #expect(Sanitizer.inert("over\rwrite") == "over^Mwrite")
        #expect(Sanitizer.inert("crlf\r\nline") == "crlf^M^Jline")
        #expect(Sanitizer.inert("bell\u{7}del\u{7F}") == "bell^Gdel^?")
    }

    @Test func c1ControlsAreShownAsHex() {
        #expect(Sanitizer.inert("csi\u{9B}2J") == "csi<9b>2J")
        #expect(Sanitizer.inert("\u{85}") == "<85>")
    }

    @Test func tabsBecomeSpacesAndNewlinesAreKeptOnlyWhenAsked() {
        #expect(Sanitizer.inert("a\tb") == "a    b")
        #expect(Sanitizer.inert("a\nb") == "a^Jb")
        #expect(Sanitizer.inert("a\nb", keepingNewlines: true) == "a\nb")
    }

    @Test func bidiOverridesAreRemoved() {
        let spoof = "file\u{202E}gnp.exe\u{202C} \u{2066}x\u{2069}"
        let clean = Sanitizer.inert(spoof)
        #expect(clean == "filegnp.exe x")
        #expect(!clean.unicodeScalars.contains { (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) })
    }

    @Test func emojiSequencesSurvive() {
        #expect(Sanitizer.inert("👨‍👩‍👧 ❤️ e\u{301}") == "👨‍👩‍👧 ❤️ e\u{301}")
    }

    @Test func noControlScalarEverSurvives() {
        var all = ""
        for v in UInt32(0)..<0xA0 { if let s = Unicode.Scalar(v) { all.unicodeScalars.append(s) } }
        let clean = Sanitizer.inert(all)
        #expect(!clean.unicodeScalars.contains { $0.value < 0x20 || ($0.value >= 0x7F && $0.value < 0xA0) })
    }

    @Test func escapeSequenceInAMessageNeverReachesTheGrid() {
        var state = ClientViewState()
        state.messages = [MessageItem(id: "1", time: .init(timeIntervalSince1970: 0), handle: "eve\u{1B}[31m",
                                      userID: "_1009_eve", text: "pwn \u{1B}]0;title\u{7} \u{1B}[2J\r\u{9B}1;1H")]
        state.title = ChannelTitle(name: "#x\u{1B}[5m", topic: "t\u{1B}c")
        let screen = ClientRenderer.render(state, editor: LineEditor(), width: 80, height: 24)
        for cell in screen.cells {
            #expect(!cell.grapheme.unicodeScalars.contains { $0.value < 0x20 || ($0.value >= 0x7F && $0.value < 0xA0) })
        }
        #expect(screen.lines.joined().contains("pwn ^[]0;title^G ^[[2J^M<9b>1;1H"))
        #expect(screen.lines.joined().contains("<eve^[[31m (eve)>"))
    }
}
