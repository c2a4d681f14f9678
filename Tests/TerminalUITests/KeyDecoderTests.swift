import CNCurses
import Testing
@testable import TerminalUI

@Suite struct KeyDecoderTests {
    func decode(_ text: String) -> [InputEvent] {
        var decoder = KeyDecoder()
        return decoder.decodeAll(text.unicodeScalars.map { .character($0.value) })
    }

    @Test func printableAndControlCharacters() {
        #expect(decode("a你") == [.key(.character("a")), .key(.character("你"))])
        #expect(decode("\u{1}\u{5}\u{17}\u{3}\u{11}\u{13}") ==
                [.key(.control("a")), .key(.control("e")), .key(.control("w")),
                 .key(.control("c")), .key(.control("q")), .key(.control("s"))])
        #expect(decode("\r\t\u{7F}\u{8}") == [.key(.enter), .key(.tab), .key(.backspace), .key(.backspace)])
    }

    @Test func escPrefixMeansAlt() {
        #expect(decode("\u{1B}b\u{1B}f\u{1B}1") == [.key(.alt("b")), .key(.alt("f")), .key(.alt("1"))])
        #expect(decode("\u{1B}\u{7F}") == [.key(.altBackspace)])
    }

    @Test func loneEscapeIsEscapeAfterFlush() {
        var decoder = KeyDecoder()
        #expect(decoder.decode(.character(0x1B)).isEmpty)
        #expect(decoder.flush() == [.key(.escape)])
        #expect(decode("\u{1B}\u{1B}") == [.key(.escape), .key(.escape)])
    }

    @Test func cursesKeyCodes() {
        var decoder = KeyDecoder()
        let codes: [Int32] = [KEY_UP, KEY_DOWN, KEY_LEFT, KEY_RIGHT, KEY_HOME, KEY_END, KEY_PPAGE, KEY_NPAGE,
                              KEY_DC, KEY_BACKSPACE, KEY_RESIZE, fatchat_key_f(1), fatchat_key_f(12)]
        let keys = decoder.decodeAll(codes.map { .keyCode($0) })
        #expect(keys == [.key(.up), .key(.down), .key(.left), .key(.right), .key(.home), .key(.end),
                         .key(.pageUp), .key(.pageDown), .key(.delete), .key(.backspace), .key(.resize),
                         .key(.function(1)), .key(.function(12))])
    }

    @Test func bracketedPasteBecomesOneEventWithNewlines() {
        let events = decode("x\u{1B}[200~line one\rline two\r\nthree\u{1B}[201~y")
        #expect(events == [.key(.character("x")), .paste("line one\nline two\nthree"), .key(.character("y"))])
    }

    @Test func pasteSpanningSeveralReadsStaysOpen() {
        var decoder = KeyDecoder()
        var events = decoder.decodeAll("\u{1B}[200~abc".unicodeScalars.map { .character($0.value) })
        #expect(events.isEmpty)
        #expect(decoder.isInPaste)
        events = decoder.decodeAll("\u{1B}def\u{1B}[201~".unicodeScalars.map { .character($0.value) })
        #expect(events == [.paste("abc\u{1B}def")])
        #expect(!decoder.isInPaste)
    }

    @Test func controlKeysInsideAPasteAreText() {
        #expect(decode("\u{1B}[200~a\u{3}b\u{1B}[201~") == [.paste("a\u{3}b")])
    }

    @Test func unknownEscapeSequenceLosesNothing() {
        #expect(decode("\u{1B}[2x") == [.key(.alt("[")), .key(.character("2")), .key(.character("x"))])
    }
}
