import Foundation
import Testing
@testable import TerminalUI

@Suite struct ScrollbackTests {
    func state(messages count: Int, text: String = "hello") -> ClientViewState {
        var state = ClientViewState()
        state.messages = (0..<count).map {
            MessageItem(id: "m\($0)", time: Date(timeIntervalSince1970: 0), handle: "a", userID: "1", text: "\(text) \($0)")
        }
        return state
    }

    @Test func bottomShowsTheNewestLines() {
        let s = state(messages: 50)
        let viewport = ClientRenderer.messageViewport(s, width: 80, height: 24)
        #expect(viewport.visible.count == 21)
        #expect(viewport.visible.last?.messageID == "m49")
        #expect(viewport.isAtBottom)
        #expect(!viewport.reachesOldest)
    }

    @Test func pageUpAndBackDown() {
        var s = state(messages: 50)
        s.scroll = ClientRenderer.scroll(s, by: 21, width: 80, height: 24)
        #expect(s.scroll == .anchored(messageID: "m8", line: 0))
        let up = ClientRenderer.messageViewport(s, width: 80, height: 24)
        #expect(up.visible.last?.messageID == "m28")
        #expect(!up.isAtBottom)
        s.scroll = ClientRenderer.scroll(s, by: -21, width: 80, height: 24)
        #expect(s.scroll == .bottom)
    }

    @Test func scrollingPastTheTopStopsAndAsksForOlder() {
        var s = state(messages: 30)
        s.scroll = ClientRenderer.scroll(s, by: 1000, width: 80, height: 24)
        let viewport = ClientRenderer.messageViewport(s, width: 80, height: 24)
        #expect(viewport.visible.first?.messageID == "m0")
        #expect(viewport.reachesOldest)
    }

    @Test func anchorKeepsThePlaceAcrossARewrap() {
        var s = state(messages: 60, text: String(repeating: "word ", count: 20))
        s.scroll = ClientRenderer.scroll(s, by: 40, width: 80, height: 24)
        guard case .anchored(let id, _) = s.scroll else { Issue.record("not anchored"); return }
        // A narrower terminal wraps into more lines, but the same message stays on top.
        let narrow = ClientRenderer.messageViewport(s, width: 50, height: 24)
        #expect(narrow.visible.first?.messageID == id)
        #expect(!narrow.isAtBottom)
    }
}
