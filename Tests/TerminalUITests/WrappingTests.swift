import Foundation
import Testing
@testable import TerminalUI

@Suite struct WrappingTests {
    @Test func wrapsAtSpaces() {
        #expect(TextWrapper.wrap("the quick brown fox", width: 10) == ["the quick", "brown fox"])
    }

    @Test func breaksAWordLongerThanTheLine() {
        #expect(TextWrapper.wrap("abcdefghijkl xy", width: 5) == ["abcde", "fghij", "kl xy"])
    }

    @Test func wideCharactersWrapByWidth() {
        #expect(TextWrapper.wrap("你好世界你好", width: 5) == ["你好", "世界", "你好"])
        #expect(TextWrapper.wrap("ab 👨‍👩‍👧 cd", width: 4) == ["ab", "👨‍👩‍👧", "cd"])
    }

    @Test func newlinesForceBreaks() {
        #expect(TextWrapper.wrap("one\ntwo three", width: 20) == ["one", "two three"])
        #expect(TextWrapper.wrap("a\n\nb", width: 20) == ["a", "", "b"])
    }

    @Test func emptyTextIsOneEmptyLine() {
        #expect(TextWrapper.wrap("", width: 10) == [""])
    }

    @Test func messageContinuationLinesAreIndentedUnderTheText() throws {
        let builder = MessageLines(width: 30, myHandle: "me", timeZone: try #require(TimeZone(identifier: "UTC")))
        let message = MessageItem(id: "m", time: Date(timeIntervalSince1970: 3600 * 13 + 60 * 7), handle: "alice",
                                  userID: "_1001_alice", text: "one two three four five six seven eight")
        let lines = builder.lines(for: [message], firstUnreadID: nil)
        var screen = Screen(width: 30, height: lines.count)
        for (row, line) in lines.enumerated() {
            for segment in line.segments { screen.write(segment.text, row: row, column: segment.column, style: segment.style) }
        }
        #expect(screen.lines == [
            "13:07 <alice> one two three",
            "              four five six",
            "              seven eight",
        ])
    }

    @Test func unreadMarkerGoesAboveTheFirstUnreadMessage() {
        let builder = MessageLines(width: 20, myHandle: "")
        let messages = (0..<3).map { MessageItem(id: "m\($0)", time: Date(), handle: "a", userID: "1", text: "hi") }
        let lines = builder.lines(for: messages, firstUnreadID: "m1")
        #expect(lines.count == 4)
        #expect(lines[1].messageID == "m1")
        #expect(lines[1].segments.first?.text.contains("new") == true)
        #expect(lines[2].segments.contains { $0.text == "hi" })
    }

    @Test func mentionOfMyHandleIsHighlightedAsAWholeWord() {
        let theme = Theme()
        let builder = MessageLines(width: 60, myHandle: "Bob", theme: theme)
        let message = MessageItem(id: "m", time: Date(), handle: "a", userID: "1", text: "hi bob, not bobby")
        let segments = builder.lines(for: [message], firstUnreadID: nil)[0].segments
        let highlighted = segments.filter { $0.style == theme.mention }.map(\.text)
        #expect(highlighted == ["bob"])
    }

    @Test func editedAndFailedMarksAreAppended() {
        let builder = MessageLines(width: 60, myHandle: "")
        let message = MessageItem(id: "m", time: Date(), handle: "a", userID: "1", text: "x", isEdited: true, delivery: .failed)
        let text = builder.lines(for: [message], firstUnreadID: nil)[0].segments.map(\.text).joined()
        #expect(text.hasSuffix("x (edited) [not sent]"))
    }
}
