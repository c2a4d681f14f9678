import Testing
@testable import TerminalUI
import FatchatCore

@Suite struct LineEditorTests {
    /// An editor after typing `text` key by key.
    func typed(_ text: String) -> LineEditor {
        var editor = LineEditor()
        for c in text { _ = editor.handle(.key(.character(c))) }
        return editor
    }

    func press(_ editor: inout LineEditor, _ keys: Key...) {
        for key in keys { _ = editor.handle(.key(key)) }
    }

    @Test func cursorMotionAndInsertion() {
        var editor = typed("helo")
        press(&editor, .left, .character("l"))
        #expect(editor.text == "hello")
        #expect(editor.cursor == 4)
        press(&editor, .control("a"), .character(">"), .end, .character("!"))
        #expect(editor.text == ">hello!")
        press(&editor, .home, .right)
        #expect(editor.cursor == 1)
    }

    @Test func killAndYank() {
        var editor = typed("one two three")
        press(&editor, .control("w"))
        #expect(editor.text == "one two ")
        press(&editor, .control("a"), .control("k"))
        #expect(editor.text == "")
        press(&editor, .control("y"))
        #expect(editor.text == "one two ")
        press(&editor, .control("u"))
        #expect(editor.text == "")
        #expect(editor.killRing.suffix(2) == ["one two ", "one two "])
    }

    @Test func wordMotionWithAlt() {
        var editor = typed("alpha beta-gamma")
        press(&editor, .alt("b"))
        #expect(editor.cursor == 11)
        press(&editor, .alt("b"), .alt("b"))
        #expect(editor.cursor == 0)
        press(&editor, .alt("f"))
        #expect(editor.cursor == 5)
    }

    @Test func backspaceAndDeleteRemoveWholeGraphemes() {
        var editor = typed("a你👨‍👩‍👧b")
        press(&editor, .left, .backspace)
        #expect(editor.text == "a你b")
        press(&editor, .home, .delete)
        #expect(editor.text == "你b")
    }

    @Test func combiningScalarsTypedSeparatelyJoinTheirBase() {
        var editor = LineEditor()
        _ = editor.handle(.key(.character("e")))
        _ = editor.handle(.key(.character("\u{301}")))
        #expect(editor.graphemes.count == 1)
        #expect(editor.cursor == 1)
    }

    @Test func enterSubmitsAndRecordsHistory() {
        var editor = typed("first")
        #expect(editor.handle(.key(.enter)) == .submit("first"))
        #expect(editor.text == "")
        #expect(editor.handle(.key(.enter)) == .edited)   // empty line sends nothing
        editor = LineEditor()
        #expect(editor.handle(.key(.pageUp)) == .ignored)
    }

    @Test func historyBrowsingKeepsTheDraft() {
        var editor = LineEditor()
        for line in ["one", "two"] {
            editor.setText(line)
            _ = editor.handle(.key(.enter))
        }
        editor.setText("draft")
        press(&editor, .up)
        #expect(editor.text == "two")
        press(&editor, .up, .up)
        #expect(editor.text == "one")
        press(&editor, .down)
        #expect(editor.text == "two")
        press(&editor, .down)
        #expect(editor.text == "draft")
    }

    @Test func pasteInsertsSeveralLinesAsOneMessage() {
        var editor = LineEditor()
        _ = editor.handle(.paste("line one\nline two"))
        #expect(editor.handle(.key(.enter)) == .submit("line one\nline two"))
    }

    @Test func viewportScrollsToShowTheCursor() {
        var editor = LineEditor()
        editor.setText(String(repeating: "x", count: 30))
        let (text, column) = editor.viewport(width: 10)
        #expect(DisplayWidth.of(text) <= 10)
        #expect(column < 10)
        #expect(column == DisplayWidth.of(text))     // cursor at the end of the shown part
        press(&editor, .home)
        #expect(editor.viewport(width: 10) == (String(repeating: "x", count: 10), 0))
    }

    @Test func viewportNeverSplitsWideCharacters() {
        var editor = LineEditor()
        editor.setText(String(repeating: "你", count: 20))
        let (text, column) = editor.viewport(width: 9)
        #expect(DisplayWidth.of(text) <= 9)
        #expect(text.allSatisfy { $0 == "你" })
        #expect(column < 9)
    }
}
