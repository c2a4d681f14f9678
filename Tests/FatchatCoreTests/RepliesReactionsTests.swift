import Foundation
import Testing
@testable import FatchatCore
import RecordStore

/// Replies, reactions, `/me` and highlight words on a real container, through the commands people type.
@Suite struct RepliesReactionsTests {
    private func session(_ sandbox: ChatSandbox) throws -> ChatSession {
        let client = try sandbox.client()
        let session = ChatSession(client: client)
        _ = try session.run(.join(channel: "general"))
        return session
    }

    @Test func aReplyRefersToItsParentAndOutlivesIt() throws {
        let sandbox = try ChatSandbox()
        let session = try session(sandbox)
        guard case .queued(let parent) = try session.run(CommandGrammar.parse("is the build green?")) else { Issue.record("no post"); return }
        session.client.flush()
        guard case .queued(let reply) = try session.run(CommandGrammar.parse("/reply \(parent.shortID) yes, since 9:40")) else {
            Issue.record("no reply"); return
        }
        session.client.flush()
        #expect(reply.replyTo == parent.id)
        let stored = try session.client.messages(in: ChannelName("general")).messages
        #expect(stored.map(\.text) == ["is the build green?", "yes, since 9:40"])
        #expect(stored.last?.replyTo == parent.id)

        // Deleting the parent leaves the reply, which still names it; the parent reads as gone.
        _ = try session.run(.deleteMessage(message: parent.shortID))
        session.client.flush()
        let after = try session.client.messages(in: ChannelName("general")).messages
        #expect(after.map(\.text) == ["yes, since 9:40"])
        #expect(after.first?.replyTo == parent.id)
        #expect(try session.client.message(parent.id) == nil)

        #expect(throws: CommandError.self) { try session.run(CommandGrammar.parse("/reply zzzz hi")) }
    }

    @Test func eachEmojiCountsOncePerAccountAndReactionsAreNoMessages() throws {
        let sandbox = try ChatSandbox()
        let session = try session(sandbox)
        guard case .queued(let message) = try session.run(.post(channel: nil, text: "ship it")) else { Issue.record("no post"); return }
        session.client.flush()
        for line in ["/react \(message.shortID) 👍", "/react \(message.shortID) 👍", "/react \(message.shortID) 🎉", "/react \(message.shortID) +1"] {
            _ = try session.run(CommandGrammar.parse(line))
        }
        session.client.flush()
        // A second client of the same account reacting again adds nothing either.
        let again = try sandbox.client("again")
        try again.react(to: message.shortID, with: "👍", in: ChannelName("general"))
        again.flush()

        guard case .reactions(_, let counts) = try session.run(.reactions(message: message.shortID)) else { Issue.record("no reactions"); return }
        #expect(counts.map(\.emoji) == ["👍", "🎉", "+1"])
        #expect(counts.map(\.count) == [1, 1, 1])
        #expect(counts.first?.users == [session.client.user])
        #expect(try session.client.messages(in: ChannelName("general")).messages.map(\.text) == ["ship it"], "no reaction is a message line")
        #expect(try session.client.unreadCount(ChannelName("general")) == 0)

        _ = try session.run(.unreact(message: message.shortID, reaction: "👍"))
        session.client.flush()
        #expect(try session.client.reactions(to: [message.id])[message.id]?.map(\.emoji) == ["🎉", "+1"])

        // Deleting the message takes its reactions with it.
        _ = try session.run(.deleteMessage(message: message.shortID))
        session.client.flush()
        #expect(try session.client.reactions(to: [message.id])[message.id] == nil)
    }

    @Test func reactionsAreOneCharacterOrAShortWord() {
        for good in ["👍", "🎉", "❤️", "👨‍👩‍👧", "+1", "lgtm", "é"] {
            #expect(Reaction.isValid(good), "\(good)")
        }
        for bad in ["", "👍👍", "two words", "\u{1B}[31m", "\u{202E}", "a\nb", String(repeating: "x", count: 17), "!", "\u{0007}"] {
            #expect(!Reaction.isValid(bad), "\(bad.debugDescription)")
        }
    }

    @Test func aReactionNamedForAnotherAccountCountsForNobody() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        let message = try client.post("hi", to: ChannelName("general"))
        client.flush()
        // Written as this account, but under the name another account's reaction would have.
        var forged = Record(recordType: ChatSchema.reactionType,
                            recordID: Reaction.recordID(message: message.id, emoji: "👍", account: "_4242_mallory"))
        forged["message"] = .reference(Reference(recordID: message.id.recordID, action: .deleteSelf))
        forged["emoji"] = "👍"
        _ = try client.container.publicDatabase.save(forged)
        #expect(try client.reactions(to: [message.id]).isEmpty)
    }

    @Test func actionsAreFlaggedAndShownAsStars() throws {
        #expect(try CommandGrammar.parse("/me waves") == .action(channel: nil, text: "waves"))
        let sandbox = try ChatSandbox()
        let session = try session(sandbox)
        guard case .queued(let message) = try session.run(CommandGrammar.parse("/me waves at everyone")) else { Issue.record("no post"); return }
        session.client.flush()
        let stored = try #require(try session.client.messages(in: ChannelName("general")).messages.last)
        #expect(stored.isAction && stored.text == "waves at everyone" && stored.id == message.id)
        let plain = EventFormatter(json: false).message(stored)
        #expect(plain.hasSuffix("#general * \(stored.handle) waves at everyone"), "\(plain)")
        #expect(EventFormatter(json: true).message(stored).contains("\"action\":true"))
    }

    @Test func highlightWordsPersistAndCountAsMentions() throws {
        let sandbox = try ChatSandbox()
        let session = try session(sandbox)
        guard case .highlights(let words, _) = try session.run(CommandGrammar.parse("/highlight add Deploy")) else { Issue.record("no list"); return }
        #expect(words == ["deploy"])
        _ = try session.run(CommandGrammar.parse("/highlight add outage"))
        _ = try session.run(CommandGrammar.parse("/highlight del deploy"))
        #expect(throws: CommandError.self) { try session.run(CommandGrammar.parse("/highlight add two\u{1B}words")) }
        // Kept in the private database: a later client of this user sees them.
        let later = try sandbox.client()
        #expect(later.highlightWords() == ["outage"])
        let matcher = later.mentionMatcher()
        #expect(matcher.matches("is this an OUTAGE?"))
        #expect(matcher.matches("ping \(later.handle): hi"))
        #expect(!matcher.matches("outages happen"))
        #expect(!matcher.matches("deploy done"))
        let parent = Message.record(text: "big outage", handle: "eve", in: try ChannelName("general"))
        let json = EventFormatter(json: true).message(try #require(Message(parent)), mention: true)
        #expect(json.contains("\"mention\":true"))
    }
}
