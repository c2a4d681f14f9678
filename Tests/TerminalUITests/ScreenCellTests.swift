import Testing
@testable import FatchatCore
@testable import TerminalUI

/// The grid holds, cell by cell, what a terminal would: a cluster with several spacing
/// code points takes several cells, and emoji sequences show in their inert forms.
@Suite struct ScreenCellTests {
    /// The texts of a row's cells, continuations left out.
    static func cells(_ screen: Screen, row: Int = 0) -> [String] {
        (0..<screen.width).compactMap { screen.cell(row: row, column: $0) }.filter { !$0.isContinuation }.map(\.grapheme)
    }

    @Test func aConjunctTakesOneCellPerSpacingLetter() {
        var screen = Screen(width: 8, height: 1)
        let end = screen.write("नमस्ते", row: 0, column: 0)
        #expect(end == 4)
        #expect(Self.cells(screen).prefix(4) == ["न", "म", "स्", "ते"])
        #expect(screen.text(row: 0) == "नमस्ते")
    }

    @Test func oldHangulKeepsBothLeadJamo() {
        var screen = Screen(width: 6, height: 1)
        #expect(screen.write("\u{1100}\u{1100}\u{1161}x", row: 0, column: 0) == 5)
        #expect(screen.cell(row: 0, column: 1)?.isContinuation == true)
        #expect(screen.cell(row: 0, column: 2)?.grapheme == "\u{1100}\u{1161}")
        #expect(screen.cell(row: 0, column: 3)?.isContinuation == true)
        #expect(screen.cell(row: 0, column: 4)?.grapheme == "x")
    }

    @Test func flagsJoinedEmojiAndUnknownCodePointsShowInTheirInertForms() {
        var screen = Screen(width: 40, height: 1)
        screen.write("🇦🇩 🇦🇪 👨‍👩‍👧 \u{1FAE8}", row: 0, column: 0)
        #expect(screen.text(row: 0) == "[AD] [AE] 👨👩👧 <1fae8>")
        #expect(!Self.cells(screen).contains { $0.unicodeScalars.contains { $0.value == 0x200D } })
    }

    @Test func aMessageStartingWithAMarkShowsItOnADottedCircle() {
        var screen = Screen(width: 6, height: 1)
        screen.write("\u{301}a", row: 0, column: 0)
        #expect(Self.cells(screen).prefix(2) == ["\u{25CC}\u{301}", "a"])
    }

    @Test func noCellHoldsMoreThanNcursesTakes() {
        var screen = Screen(width: 10, height: 1)
        screen.write("a" + String(repeating: "\u{301}", count: 12), row: 0, column: 0)
        let cells = Self.cells(screen).filter { $0 != " " }
        #expect(cells.count == 3)
        #expect(cells.allSatisfy { $0.unicodeScalars.count <= DisplayWidth.maxScalarsPerCell })
        #expect(cells.joined().unicodeScalars.filter { $0.value == 0x301 }.count == 12)
    }

    @Test func aClusterCutByTheLimitKeepsWholeCellsAndPads() {
        var screen = Screen(width: 10, height: 1)
        screen.write("xxxxxxxxxx", row: 0, column: 0)
        // The old Hangul syllable needs four cells; only three are left before the limit.
        let end = screen.write("a\u{1100}\u{1100}\u{1161}", row: 0, column: 0, limit: 4)
        #expect(end == 4)
        #expect(screen.text(row: 0) == "a\u{1100} xxxxxx")
        #expect(screen.cell(row: 0, column: 3)?.isContinuation == false)
    }

    @Test func wrappingCountsEveryCellOfACluster() {
        // Four clusters of two cells each (Thai SARA AM is spacing) fill two 4-cell lines.
        let lines = TextWrapper.wrap("กำกำกำกำ", width: 4)
        #expect(lines == ["กำกำ", "กำกำ"])
    }
}
