import Foundation
import Testing
@testable import FatchatCore
@testable import RecordStore
@testable import TerminalUI

/// How replies, reactions, actions, the unread line, highlight words and multi-line drafts are drawn and driven.
@Suite struct RepliesReactionsScreenTests {
    private let utc = TimeZone(identifier: "UTC") ?? .current
    private let noon = Date(timeIntervalSince1970: 43_200)

    private func text(of line: MessageLine) -> String {
        var result = ""
        for segment in line.segments {
            while DisplayWidth.of(result) < segment.column { result += " " }
            result += segment.text
        }
        return result
    }

    @Test func aReplyShowsItsParentQuotedAndCutToTheWidth() {
        var reply = MessageItem(id: "r1", time: noon, handle: "bob", userID: "_2_bob", text: "yes")
        reply.quote = ReplyQuote(parentID: "p1", handle: "ada", userID: "_1_ada",
                                 text: "is the build green on every host\nand \u{1B}[31mred?")
        let lines = MessageLines(width: 40, myHandle: "me", timeZone: utc).lines(for: [reply], firstUnreadID: nil).map(text(of:))
        #expect(lines.count == 2)
        #expect(lines[0] == "      ↳ <ada> is the build green on eve…", "\(lines)")
        #expect(lines[1] == "12:00 <bob> yes")

        reply.quote = ReplyQuote(parentID: "p1", isDeleted: true)
        let gone = MessageLines(width: 40, myHandle: "me", timeZone: utc).lines(for: [reply], firstUnreadID: nil).map(text(of:))
        #expect(gone.first == "      ↳ (deleted message)")
    }

    @Test func reactionsFollowTheTextAsCountsAndActionsReadAsStars() {
        var message = MessageItem(id: "m1", time: noon, handle: "ada", userID: "_1_ada", text: "ship it")
        message.reactions = [ReactionBadge(emoji: "👍", count: 3), ReactionBadge(emoji: "\u{1B}x", count: 1)]
        var action = MessageItem(id: "m2", time: noon, handle: "bob", userID: "_2_bob", text: "waves")
        action.isAction = true
        let lines = MessageLines(width: 60, myHandle: "me", timeZone: utc).lines(for: [message, action], firstUnreadID: "m2").map(text(of:))
        #expect(lines[0] == "12:00 <ada> ship it  👍 3  ^[x 1", "\(lines)")
        #expect(lines[1].contains("─ new messages ─"))
        #expect(lines[2] == "12:00 * bob waves")
    }

    @Test func highlightWordsAreDrawnAsMentions() {
        let message = MessageItem(id: "m1", time: noon, handle: "eve", userID: "_3_eve", text: "the deploy failed")
        let theme = Theme()
        let lines = MessageLines(width: 60, myHandle: "me", highlightWords: ["deploy"], theme: theme, timeZone: utc)
            .lines(for: [message], firstUnreadID: nil)
        #expect(lines[0].segments.contains { $0.text == "deploy" && $0.style == theme.mention }, "\(lines)")
    }

    @Test func altEnterAddsALineAndTheInputGrowsToFiveRows() {
        var decoder = KeyDecoder()
        #expect(decoder.decodeAll([.character(0x1B), .character(0x0D)]) == [.key(.altEnter)])
        var editor = LineEditor()
        for line in ["one", "two", "three", "four", "five", "six"] {
            if !editor.text.isEmpty { _ = editor.handle(.key(.altEnter)) }
            editor.insert(line)
        }
        #expect(editor.text == "one\ntwo\nthree\nfour\nfive\nsix")
        #expect(editor.lineCount == 6 && editor.rowCount == 5)
        let rows = editor.rowsViewport(width: 20, rows: 5)
        #expect(rows.lines == ["two", "three", "four", "five", "six"] && rows.cursorRow == 4 && rows.cursorColumn == 3)
        #expect(Layout(width: 80, height: 24, showsMemberList: false, inputRows: 5).input == Rect(row: 19, column: 0, width: 80, height: 5))
        #expect(Layout(width: 80, height: 24, showsMemberList: false, inputRows: 5).messages.height == 17)
        #expect(editor.handle(.key(.enter)) == .submit("one\ntwo\nthree\nfour\nfive\nsix"))
    }

    @Test func theScreenQuotesRepliesCountsReactionsAndJumpsToTheParent() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let client = try sandbox.client()
        let general = try ChannelName("general")
        let parent = try client.post("is the build green?", to: general)
        for index in 0..<40 { try client.post("filler \(index)", to: general) }
        try client.reply(to: parent.shortID, text: "yes, all green", in: general)
        client.start()
        defer { client.stop() }
        #expect(client.waitUntilSent(timeout: 10))
        try client.react(to: parent.shortID, with: "👍", in: general)
        #expect(client.waitUntilSent(timeout: 10))

        let screen = try ChatScreen(client: client, width: 80, height: 24, renderOptions: RenderOptions(usesColor: false))
        var lines = screen.render().lines
        #expect(lines.contains { $0.contains("↳ <ada") && $0.contains("> is the build green?") }, "\(lines.joined(separator: "\n"))")
        #expect(!lines.contains { $0.contains("> is the build green?  👍 1") }, "the parent is off screen")

        screen.handle(.key(.alt("r")))
        lines = screen.render().lines
        #expect(lines.contains { $0.contains("> is the build green?  👍 1") }, "\(lines.joined(separator: "\n"))")

        // The parent deleted: the reply stays, its quote says so.
        try client.deleteMessage(parent.shortID, in: general)
        #expect(client.waitUntilSent(timeout: 10))
        let deadline = Date().addingTimeInterval(10)
        while screen.state.messages.contains(where: { $0.id == parent.id.rawValue }), Date() < deadline {
            client.drainEvents().forEach(screen.handle)
            usleep(20_000)
        }
        screen.handle(.key(.end))
        #expect(screen.render().lines.contains { $0.contains("↳ (deleted message)") })
    }

    @Test func altUGoesToTheNewMessagesLineLoadingOlderPages() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let client = try sandbox.client()
        let general = try ChannelName("general")
        try client.post("read long ago", to: general)
        client.start()
        defer { client.stop() }
        #expect(client.waitUntilSent(timeout: 10))
        let read = try #require(try client.messages(in: general).messages.last)
        try client.markRead(general, upTo: read.date)
        // The unread messages are someone else's.
        let eve = Self.eve(of: client)
        for index in 0..<80 {
            usleep(2_000)
            _ = try eve.save(Message.record(text: "unread \(index)", handle: "eve", in: general))
        }
        var options = ChatScreen.Options()
        options.pageSize = 20
        let screen = try ChatScreen(client: client, width: 80, height: 24, options: options, renderOptions: RenderOptions(usesColor: false))
        // Only the newest page is loaded, all of it new: the line cannot be where I left off yet.
        #expect(!screen.render().lines.contains { $0.contains("unread 0") })
        screen.handle(.key(.alt("u")))
        let lines = screen.render().lines
        let marker = try #require(lines.firstIndex { $0.contains("─ new messages ─") }, "\(lines.joined(separator: "\n"))")
        #expect(lines[marker + 1].contains("unread 0"), "\(lines.joined(separator: "\n"))")
    }
}

extension RepliesReactionsScreenTests {
    /// The client's shared file as another account, eve, sees it: what she saves is hers.
    static func eve(of client: ChatClient) -> RecordDatabase {
        let mine = client.container.publicDatabase
        return RecordDatabase(scope: .public, storage: mine.storage, assets: mine.assets,
                              user: UserIdentity(uid: 4_000_002, userName: "eve", homeDirectory: "/nonexistent"), historyLimit: 1000)
    }

    @Test func aHighlightWordRingsAndMarksTheChannelAsAMentionDoes() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let client = try sandbox.client()
        var options = ChatScreen.Options()
        options.bellOnMention = true
        let screen = try ChatScreen(client: client, width: 80, height: 24, options: options, renderOptions: RenderOptions(usesColor: false))
        for character in "/join ops" { screen.handle(.key(.character(character))) }
        screen.handle(.key(.enter))
        for character in "/highlight add deploy" { screen.handle(.key(.character(character))) }
        screen.handle(.key(.enter))
        client.start()
        defer { client.stop() }
        #expect(client.waitUntilSent(timeout: 10))
        _ = try Self.eve(of: client).save(Message.record(text: "lunch?", handle: "eve", in: try ChannelName("general")))
        _ = try Self.eve(of: client).save(Message.record(text: "the deploy failed", handle: "eve", in: try ChannelName("general")))
        let deadline = Date().addingTimeInterval(10)
        var effects: [ChatScreen.Effect] = []
        while effects.isEmpty, Date() < deadline {
            client.drainEvents().forEach(screen.handle)
            effects += screen.takeEffects()
            usleep(20_000)
        }
        #expect(effects == [.bell])
        #expect(screen.state.channels.first { $0.name == "#general" }?.hasMention == true)
    }
    @Test func comingBackToAChannelMarksWhereILeftOff() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let client = try sandbox.client()
        let general = try ChannelName("general")
        let screen = try ChatScreen(client: client, width: 80, height: 24, renderOptions: RenderOptions(usesColor: false))
        client.start()
        defer { client.stop() }
        #expect(client.waitUntilSent(timeout: 10))
        let eve = Self.eve(of: client)
        func arrive(_ text: String) throws {
            _ = try eve.save(Message.record(text: text, handle: "eve", in: general))
            let deadline = Date().addingTimeInterval(10)
            var seen = false
            while !seen, Date() < deadline {
                for event in client.drainEvents() {
                    screen.handle(event)
                    if case .message(let message) = event, message.text == text { seen = true }
                }
                usleep(20_000)
            }
            #expect(seen, "'\(text)' arrived while the test waited")
        }
        // Leaving at once, before a tick marked it read: leaving marks it.
        try arrive("before you left")
        for character in "/join ops" { screen.handle(.key(.character(character))) }
        screen.handle(.key(.enter))
        try arrive("while you were away")
        for character in "/join general" { screen.handle(.key(.character(character))) }
        screen.handle(.key(.enter))
        let lines = screen.render().lines
        let marker = try #require(lines.firstIndex { $0.contains("─ new messages ─") }, "\(lines.joined(separator: "\n"))")
        #expect(lines[marker + 1].contains("while you were away"))
    }
}
