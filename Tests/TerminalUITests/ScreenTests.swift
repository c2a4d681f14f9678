import Testing
@testable import TerminalUI

@Suite struct ScreenTests {
    @Test func writeReturnsNextColumnAndTextReadsBack() {
        var screen = Screen(width: 10, height: 2)
        let end = screen.write("hi 你", row: 0, column: 1)
        #expect(end == 6)
        #expect(screen.text(row: 0) == " hi 你")
        #expect(screen.cell(row: 0, column: 5)?.isContinuation == true)
        #expect(screen.lines == [" hi 你", ""])
    }

    @Test func wideCharacterAtTheEdgeIsPaddedNotSplit() {
        var screen = Screen(width: 5, height: 1)
        screen.write("abcd你", row: 0, column: 0)
        #expect(screen.text(row: 0) == "abcd")
        #expect(screen.cell(row: 0, column: 4)?.grapheme == " ")
        #expect(screen.cell(row: 0, column: 4)?.isContinuation == false)
    }

    @Test func wideCharacterCrossingALimitIsPadded() {
        var screen = Screen(width: 10, height: 1)
        screen.write("xxxxxxxxxx", row: 0, column: 0)
        screen.write("a你", row: 0, column: 0, limit: 2)
        #expect(screen.text(row: 0) == "a xxxxxxxx")
    }

    @Test func overwritingHalfOfAWideCharacterBlanksTheOtherHalf() {
        var screen = Screen(width: 6, height: 1)
        screen.write("你好", row: 0, column: 0)
        screen.write("x", row: 0, column: 1)
        #expect(screen.text(row: 0) == " x好")
        screen.write("y", row: 0, column: 2)
        #expect(screen.text(row: 0) == " xy")
        #expect(screen.cell(row: 0, column: 3)?.isContinuation == false)
    }

    @Test func writesOutsideTheGridAreIgnored() {
        var screen = Screen(width: 3, height: 1)
        screen.write("abc", row: 5, column: 0)
        screen.write("abcdef", row: 0, column: -2)
        #expect(screen.lines == ["cde"])
    }

    @Test func withoutColorKeepsAttributes() {
        var screen = Screen(width: 3, height: 1)
        screen.write("a", row: 0, column: 0, style: Style(foreground: 3, background: 4, attributes: [.bold]))
        let plain = screen.withoutColor
        #expect(plain.cell(row: 0, column: 0)?.style == Style(attributes: [.bold]))
    }
}
