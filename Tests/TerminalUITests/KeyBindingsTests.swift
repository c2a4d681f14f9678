import Testing
@testable import TerminalUI

/// Moving the client's keys, as a configuration file does, and reading styles written as words.
struct KeyBindingsTests {
    @Test func bindingAnActionTakesItsOldKeysAwayAndLeavesTheOthers() throws {
        var keys = KeyBindings.defaults
        try keys.bind(.nextChannel, to: [.alt("n"), .function(5)])
        #expect(keys.action(for: .alt("n"), inputIsEmpty: false) == .nextChannel)
        #expect(keys.action(for: .function(5), inputIsEmpty: false) == .nextChannel)
        #expect(keys.action(for: .control("n"), inputIsEmpty: false) == nil, "the default key is free for the editor again")
        #expect(keys.action(for: .control("p"), inputIsEmpty: false) == .previousChannel)
        #expect(keys.action(for: .alt("2"), inputIsEmpty: false) == .selectChannel(2))
        #expect(keys.keys(for: .nextChannel) == [.alt("n"), .function(5)])
        #expect(KeyBindings.defaults.keys(for: .toggleMemberList) == [.function(2), .alt("m")])
    }

    @Test func aKeyTakenFromAnotherActionsDefaultsLeavesThatActionWithout() throws {
        var keys = KeyBindings.defaults
        try keys.bind(.quit, to: [.alt("m")])
        #expect(keys.action(for: .alt("m"), inputIsEmpty: false) == .quit)
        #expect(keys.keys(for: .toggleMemberList) == [.function(2)])
        #expect(keys.action(for: .control("c"), inputIsEmpty: false) == nil)
    }

    @Test func twoBoundActionsCannotShareAKey() throws {
        var keys = KeyBindings.defaults
        try keys.bind(.nextChannel, to: [.alt("n")])
        #expect(throws: InvalidSetting("alt-n is already bound to next-channel")) { try keys.bind(.previousChannel, to: [.alt("n")]) }
    }

    @Test(arguments: [("ctrl-n", Key.control("n")), ("Alt-x", .alt("x")), ("f12", .function(12)), ("pgup", .pageUp), ("pagedown", .pageDown)])
    func keysReadAsTheFileWritesThem(text: String, key: Key) throws {
        #expect(try KeyBindings.key(named: text) == key)
        #expect(try KeyBindings.key(named: KeyBindings.describe(key)) == key)
    }

    @Test(arguments: ["a", "enter", "ctrl-m", "ctrl-i", "alt-1", "alt-9", "f13", "f0", "ctrl-", "ctrl-ab", "up", "escape"])
    func keysTheEditorNeedsAreRefused(text: String) {
        #expect(throws: InvalidSetting.self) { try KeyBindings.key(named: text) }
    }

    @Test func stylesReadAsWordsAndEveryDefaultReadsBack() throws {
        #expect(try Style(words: "bold yellow on 236") == Style(foreground: 3, background: 236, attributes: [.bold]))
        #expect(try Style(words: "bright-blue underline") == Style(foreground: 12, attributes: [.underline]))
        #expect(try Style(words: "plain") == Style())
        for (name, path) in Theme.names {
            let style = Theme()[keyPath: path]
            #expect(try Style(words: style.words) == style, "\(name): \(style.words)")
        }
        for bad in ["", "yelow", "bold on", "red blue", "300"] {
            #expect(throws: InvalidSetting.self, "\(bad)") { try Style(words: bad) }
        }
    }
}
