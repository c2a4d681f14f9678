import Testing
@testable import TerminalUI

@Suite struct CompletionTests {
    let candidates = CompletionCandidates(commands: ["/join", "/quit", "/topic"], channels: ["#general", "#games", "#random"],
                                          handles: ["alice", "albert", "bob"])

    func editor(_ text: String) -> LineEditor {
        var editor = LineEditor()
        editor.setText(text)
        return editor
    }

    @Test func completesCommandsAtTheStart() {
        var e = editor("/jo")
        _ = e.handle(.key(.tab), candidates: candidates)
        #expect(e.text == "/join ")
    }

    @Test func completesChannelsAfterJoinAndCyclesOnRepeatedTab() {
        var e = editor("/join #g")
        _ = e.handle(.key(.tab), candidates: candidates)
        #expect(e.text == "/join #games ")
        _ = e.handle(.key(.tab), candidates: candidates)
        #expect(e.text == "/join #general ")
        _ = e.handle(.key(.tab), candidates: candidates)
        #expect(e.text == "/join #games ")
    }

    @Test func completesHandlesWithAColonAtLineStart() {
        var e = editor("AL")
        _ = e.handle(.key(.tab), candidates: candidates)
        #expect(e.text == "albert: ")
        var mid = editor("hi b")
        _ = mid.handle(.key(.tab), candidates: candidates)
        #expect(mid.text == "hi bob ")
    }

    @Test func completesInTheMiddleOfALine() {
        var e = editor("hey bo there")
        for _ in 0..<6 { _ = e.handle(.key(.left)) }
        _ = e.handle(.key(.tab), candidates: candidates)
        #expect(e.text == "hey bob  there")
    }

    @Test func noMatchLeavesTheLineAlone() {
        var e = editor("zz")
        _ = e.handle(.key(.tab), candidates: candidates)
        #expect(e.text == "zz")
    }

    @Test func anotherKeyEndsTheRound() {
        var e = editor("a")
        _ = e.handle(.key(.tab), candidates: candidates)
        _ = e.handle(.key(.character("x")))
        _ = e.handle(.key(.tab), candidates: candidates)
        #expect(e.text == "albert: x")
    }
}
