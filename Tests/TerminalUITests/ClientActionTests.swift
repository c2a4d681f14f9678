import Testing
@testable import TerminalUI

@Suite struct ClientActionTests {
    @Test func channelSwitchingKeys() {
        #expect(ClientAction.forKey(.alt("1"), inputIsEmpty: false) == .selectChannel(1))
        #expect(ClientAction.forKey(.alt("9"), inputIsEmpty: false) == .selectChannel(9))
        #expect(ClientAction.forKey(.alt("0"), inputIsEmpty: false) == nil)
        #expect(ClientAction.forKey(.control("n"), inputIsEmpty: false) == .nextChannel)
        #expect(ClientAction.forKey(.control("p"), inputIsEmpty: false) == .previousChannel)
        #expect(ClientAction.forKey(.alt("a"), inputIsEmpty: false) == .nextActiveChannel)
    }

    @Test func homeAndEndScrollOnlyWithAnEmptyInput() {
        #expect(ClientAction.forKey(.home, inputIsEmpty: true) == .scrollToOldest)
        #expect(ClientAction.forKey(.end, inputIsEmpty: true) == .scrollToNewest)
        #expect(ClientAction.forKey(.home, inputIsEmpty: false) == nil)
        #expect(ClientAction.forKey(.end, inputIsEmpty: false) == nil)
    }

    @Test func editingKeysAreLeftToTheEditor() {
        for key: Key in [.character("x"), .control("a"), .control("w"), .alt("b"), .alt("f"), .tab, .enter, .up] {
            #expect(ClientAction.forKey(key, inputIsEmpty: false) == nil)
        }
        #expect(ClientAction.forKey(.control("c"), inputIsEmpty: false) == .quit)
        #expect(ClientAction.forKey(.function(1), inputIsEmpty: false) == .toggleHelp)
    }
}
