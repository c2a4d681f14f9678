import Foundation
import Testing
@testable import FatchatCore

@Suite struct DisplayWidthTests {
    /// The texts of the cells a cluster is drawn as.
    static func cells(_ grapheme: Character) -> [String] { DisplayWidth.cells(of: grapheme).map(\.text) }

    @Test func asciiIsOneCell() {
        #expect(DisplayWidth.of("a" as Character) == 1)
        #expect(DisplayWidth.of("hello") == 5)
    }

    @Test func cjkIsTwoCells() {
        #expect(DisplayWidth.of("你" as Character) == 2)
        #expect(DisplayWidth.of("你好世界") == 8)
        #expect(DisplayWidth.of("한국어") == 6)
        #expect(DisplayWidth.of("ｶﾀｶﾅ") == 4)     // halfwidth katakana stays narrow
        #expect(DisplayWidth.of("Ａ" as Character) == 2)   // fullwidth A
    }

    /// The ranges the old table missed, which glibc counts as wide.
    @Test func kanaExtendedKhitanAndIdeographicSymbolsAreWide() throws {
        for v: UInt32 in [0x1AFF0, 0x1AFFE, 0x18D00, 0x18D08, 0x16FF0, 0x16FF1] {
            #expect(DisplayWidth.scalarWidth(v) == 2, "U+\(String(v, radix: 16))")
            let scalar = try #require(Unicode.Scalar(v))
            #expect(DisplayWidth.cells(of: Character(scalar)) == [.init(text: String(scalar), width: 2)])
        }
    }

    /// Every code point's width is glibc's, which tmux and the C library of the client use.
    @Test func everyScalarWidthIsGlibcs() throws {
        typealias WCWidth = @convention(c) (Int32) -> Int32
        let symbol = try #require(dlsym(nil, "wcwidth"))
        let wcwidth = unsafeBitCast(symbol, to: WCWidth.self)
        // A thread's own locale: the test process's global locale stays as it is.
        let utf8 = try #require(newlocale(LC_CTYPE_MASK, "C.UTF-8", nil))
        let previous = uselocale(utf8)
        defer { uselocale(previous); freelocale(utf8) }
        var mismatches: [String] = []
        for v in UInt32(0x20)...0x10FFFF where !(0xD800...0xDFFF).contains(v) && !(0x7F..<0xA0).contains(v) {
            let theirs = Int(wcwidth(Int32(v)))
            if DisplayWidth.scalarWidth(v) != theirs, mismatches.count < 20 { mismatches.append("U+\(String(v, radix: 16)) \(theirs)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        #expect(DisplayWidth.tableUnicodeVersion == "14.0.0")
    }

    /// A cluster with several spacing code points takes one cell per spacing code point.
    @Test func clustersWithSeveralSpacingCodePointsKeepThemAll() {
        #expect("नमस्ते".flatMap { Self.cells($0) } == ["न", "म", "स्", "ते"])
        #expect(Self.cells("กำ") == ["ก", "ำ"])
        #expect("தமிழ்".flatMap { Self.cells($0) } == ["த", "ம", "ி", "ழ்"])
        // Number signs that the runtime joins to the digit after them (the compiler's check does not).
        #expect("\u{600}\u{661}".count == 1)
        #expect("\u{600}\u{661}".flatMap { Self.cells($0) } == ["\u{600}", "\u{661}"])
        #expect("\u{110BD}\u{11083}".flatMap { Self.cells($0) } == ["\u{110BD}", "\u{11083}"])
        #expect(Self.cells("\u{FF65}\u{FF9F}") == ["\u{FF65}", "\u{FF9F}"])
        let oldHangul: Character = "\u{1100}\u{1100}\u{1161}"
        #expect(Self.cells(oldHangul) == ["\u{1100}", "\u{1100}\u{1161}"])
        #expect(DisplayWidth.of(oldHangul) == 4)
        #expect(DisplayWidth.of("నమస్కారం") == "నమస్కారం".unicodeScalars.filter { DisplayWidth.scalarWidth($0.value) == 1 }.count)
    }

    @Test func aFlagIsItsLettersSoNoTwoFlagsLookAlike() {
        #expect(Self.cells("🇺🇸") == ["[", "U", "S", "]"])
        #expect(DisplayWidth.of("🇦🇩🇦🇪") == 8)
        #expect(Self.cells("🇦🇩") != Self.cells("🇦🇪"))
        #expect(Self.cells("🇦") == ["[", "A", "]"])
        let england: Character = "🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}"
        #expect(Self.cells(england).joined() == "🏴[gbeng]")
    }

    @Test func emojiSequencesAreDrawnAsTheirParts() {
        let family: Character = "👨‍👩‍👧"
        #expect(Self.cells(family) == ["👨", "👩", "👧"])
        #expect(DisplayWidth.of(family) == 6)
        #expect(Self.cells("👍🏽") == ["👍", "🏽"])        // the skin tone stays, as its own swatch
        #expect(DisplayWidth.of("👍🏽") == 4)
        #expect(Self.cells("1️⃣") == ["1\u{20E3}"])        // keycap: the mark stays, VS16 goes
        #expect(Self.cells("❤️") == ["❤"])                  // one cell wide to glibc: text presentation
        #expect(DisplayWidth.of("❤️") == 1)
        #expect(Self.cells("☔\u{FE0F}") == ["☔\u{FE0F}"])  // already two cells: VS16 is harmless
    }

    @Test func codePointsGlibcDoesNotKnowAreShownAsHex() {
        #expect(DisplayWidth.scalarWidth(0x1FAE8) == -1)   // Unicode 15's shaking face
        #expect(Self.cells("\u{1FAE8}").joined() == "<1fae8>")
        #expect(DisplayWidth.of("\u{1FAE8}" as Character) == 7)
        #expect(Self.cells("\u{378}").joined() == "<378>")  // unassigned
    }

    @Test func aMarkWithoutABaseSitsOnADottedCircle() {
        #expect(Self.cells("\u{301}") == ["\u{25CC}\u{301}"])
        #expect(Self.cells("\u{1161}") == ["\u{25CC}\u{1161}"])   // a lone Hangul vowel jamo
        #expect(DisplayWidth.of("\u{301}" as Character) == 1)
    }

    @Test func combiningMarksAddNothingAndOverflowOntoAnotherCell() {
        let decomposed = "e\u{301}"
        #expect(decomposed.count == 1)
        #expect(DisplayWidth.of(decomposed) == 1)
        #expect(DisplayWidth.of("Z\u{351}\u{36B}\u{343}\u{36A}a") == 2)
        let zalgo: Character = "Z\u{300}\u{301}\u{302}\u{303}\u{304}\u{305}\u{306}\u{307}\u{308}"
        let pieces = Self.cells(zalgo)
        #expect(pieces == ["Z\u{300}\u{301}\u{302}\u{303}", "\u{25CC}\u{304}\u{305}\u{306}\u{307}", "\u{25CC}\u{308}"])
        #expect(pieces.allSatisfy { $0.unicodeScalars.count <= DisplayWidth.maxScalarsPerCell })
    }

    @Test func controlsAndLoneFormatCharactersAreZero() {
        #expect(DisplayWidth.of("\u{1B}" as Character) == 0)
        #expect(DisplayWidth.of("\u{9B}" as Character) == 0)
        #expect(DisplayWidth.of("\u{200B}" as Character) == 0)
        #expect(DisplayWidth.cells(of: "\u{200B}").isEmpty)
    }

    @Test func prefixNeverSplitsAWideCharacter() {
        #expect(DisplayWidth.prefix("ab你好", fitting: 3) == "ab")
        #expect(DisplayWidth.prefix("ab你好", fitting: 4) == "ab你")
    }
}
