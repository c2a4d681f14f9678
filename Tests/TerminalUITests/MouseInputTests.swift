@testable import FatchatCore
import Foundation
import Testing
@testable import TerminalUI

/// The mouse without a terminal: decoding around pastes and Esc, and what the screen does with the wheel and a click.
@Suite struct MouseInputTests {
    @Test func aMouseEventPassesThroughButNotInsideAPaste() {
        var decoder = KeyDecoder()
        let click = MouseEvent(.press, row: 1, column: 3)
        #expect(decoder.decodeAll([.mouse(click)]) == [.mouse(click)])
        let paste = "\u{1B}[200~ab".unicodeScalars.map { RawInput.character($0.value) }
        let end = "\u{1B}[201~".unicodeScalars.map { RawInput.character($0.value) }
        #expect(decoder.decodeAll(paste + [.mouse(click)] + end) == [.paste("ab")], "a click inside a paste is not part of it")
        #expect(decoder.decodeAll([.character(0x1B), .mouse(click)]) == [.key(.escape), .mouse(click)], "a pending Esc comes first")
    }

    @Test func theLineEditorIgnoresTheMouse() {
        var editor = LineEditor()
        editor.setText("draft")
        #expect(editor.handle(.mouse(MouseEvent(.wheelUp, row: 3, column: 3))) == .ignored)
        #expect(editor.text == "draft")
    }

    @Test func aClickPicksTheChannelOnThatRowAndTheWheelScrolls() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let screen = try ChatScreen(client: try sandbox.client(), width: 100, height: 20, renderOptions: RenderOptions(usesColor: false))
        screen.handle(.paste("/join ops"))
        screen.handle(.key(.enter))
        #expect(screen.state.title?.name == "#ops")
        let list = try #require(Layout(width: 100, height: 20, showsMemberList: false).channelList)
        screen.handle(.mouse(MouseEvent(.press, row: list.row, column: 2)))
        #expect(screen.state.title?.name == "#general", "row 0 of the list is the oldest channel")
        screen.handle(.mouse(MouseEvent(.press, row: list.row + 5, column: 2)))
        #expect(screen.state.title?.name == "#general", "an empty row of the list does nothing")
        screen.handle(.mouse(MouseEvent(.press, row: list.row + 1, column: 50)))
        #expect(screen.state.title?.name == "#general", "a click outside the list does nothing")
        screen.handle(.mouse(MouseEvent(.press, row: list.row + 1, column: 2)))
        #expect(screen.state.title?.name == "#ops")

        for line in 0..<60 {
            screen.handle(.paste("line \(line)"))
            screen.handle(.key(.enter))
        }
        #expect(screen.state.scroll == .bottom)
        screen.handle(.mouse(MouseEvent(.wheelUp, row: 5, column: 50)))
        #expect(screen.state.scroll != .bottom, "the wheel scrolled up")
        screen.handle(.mouse(MouseEvent(.wheelDown, row: 5, column: 50)))
        #expect(screen.state.scroll == .bottom, "and back down by as much")
    }
}
