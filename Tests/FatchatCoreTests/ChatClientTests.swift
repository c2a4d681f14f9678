import Foundation
import Testing
@testable import FatchatCore
import ProcessTestKit
import RecordStore

@Suite struct ChatClientTests {
    @Test func joiningANewChannelCreatesItAndAMembership() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        defer { client.engine.stop() }
        let (channel, created) = try client.join(try ChannelName("General"))
        #expect(created)
        #expect(channel.creator == client.user)
        client.flush()
        #expect(try client.members(of: try ChannelName("general")).map(\.user) == [client.user])
        #expect(try client.join(try ChannelName("GENERAL")).created == false, "names are unique ignoring case")
        #expect(try client.channels().map(\.name.display) == ["General"])
        #expect(throws: CommandError.self) { try client.createChannel(try ChannelName("general")) }
    }

    @Test func channelsAreListedOldestFirst() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        defer { client.engine.stop() }
        for name in ["zebra", "alpha", "middle"] { try client.createChannel(try ChannelName(name)) }
        #expect(try client.channels().map(\.name.display) == ["zebra", "alpha", "middle"])
    }

    @Test func leavingRemovesTheMembership() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        defer { client.engine.stop() }
        let name = try ChannelName("ops")
        try client.join(name)
        client.flush()
        try client.leave(name)
        client.flush()
        #expect(try client.members(of: name).isEmpty)
        #expect(try client.joinedChannels().isEmpty)
    }

    @Test func messagesPageNewestLastWithCursors() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        defer { client.engine.stop() }
        let name = try ChannelName("history")
        for i in 0..<25 { try client.post("message \(i)", to: name) }
        client.flush()
        let page = try client.messages(in: name, limit: 10)
        #expect(page.messages.map(\.text) == (15..<25).map { "message \($0)" })
        let older = try client.messages(in: name, limit: 10, older: page.older)
        #expect(older.messages.map(\.text) == (5..<15).map { "message \($0)" })
        let oldest = try client.messages(in: name, limit: 10, older: older.older)
        #expect(oldest.messages.map(\.text) == (0..<5).map { "message \($0)" })
        #expect(oldest.older == nil)
    }

    @Test("A page's signatures are checked together, on several threads, and each verdict stays with its own message")
    func aPageChecksEachMessagesSignature() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        defer { client.engine.stop() }
        let name = try ChannelName("signed")
        for i in 0..<48 { try client.post("line \(i) as posted", to: name) }
        client.flush()
        // Rewritten in the file behind the store's back: their signatures no longer cover their text.
        let forged: Set = [3, 20, 21, 44]
        let database = sandbox.root.appendingPathComponent("container/public.sqlite").path
        for i in forged {
            try SQLiteCLI.run(database, "UPDATE record SET fields = replace(fields, 'line \(i) as posted', 'line \(i) as forged') WHERE type = 'Message' AND fields LIKE '%line \(i) as posted%';")
        }
        // The newest ten are checked first, so the page below mixes verdicts had before with ones to verify.
        #expect(try client.messages(in: name, limit: 10).messages.map(\.verified) == (38..<48).map { !forged.contains($0) })
        let page = try client.messages(in: name, limit: 50)
        #expect(page.messages.count == 48)
        for message in page.messages {
            let index = Int(message.text.split(separator: " ")[1]) ?? -1
            #expect(message.verified == !forged.contains(index), "\(message.text)")
            #expect(message.text.hasSuffix(forged.contains(index) ? "as forged" : "as posted"))
        }
        // The search index still holds the words as posted, so search finds all 48, and checks them as a page does.
        let found = try client.search("posted")
        #expect(found.count == 48)
        #expect(Set(found.filter { !$0.verified }.map(\.text)) == Set(forged.map { "line \($0) as forged" }))
    }

    @Test("Verdicts outlive the process: a new client reads a page checked before without verifying it again, but a line changed since it verifies")
    func verdictsAreKeptForTheNextClient() throws {
        let sandbox = try ChatSandbox()
        let name = try ChannelName("kept")
        let first = try sandbox.client()
        for i in 0..<20 { try first.post("kept \(i) as posted", to: name) }
        first.flush()
        #expect(try first.messages(in: name, limit: 50).messages.allSatisfy(\.verified))
        first.container.accountKeys?.keepVerdicts()
        first.engine.stop()
        let database = sandbox.root.appendingPathComponent("container/public.sqlite").path
        try SQLiteCLI.run(database, "UPDATE record SET fields = replace(fields, 'kept 7 as posted', 'kept 7 as forged') WHERE type = 'Message';")

        // The same user's next client, with the same private data: only the changed line is verified.
        let second = try sandbox.client()
        let keys = try #require(second.container.accountKeys)
        let before = keys.signaturesVerified
        let page = try second.messages(in: name, limit: 50)
        #expect(keys.signaturesVerified - before == 1)
        #expect(page.messages.count == 20)
        #expect(page.messages.filter { !$0.verified }.map(\.text) == ["kept 7 as forged"])

        // A message checked on its own (as one arriving is) is kept too, written a moment later with others.
        try second.post("kept 20 as posted", to: name)
        second.flush()
        let newest = try #require(try second.messages(in: name, limit: 1).messages.first)
        second.container.accountKeys?.keepVerdicts()
        second.engine.stop()
        let third = try sandbox.client()
        #expect(try third.message(newest.id)?.verified == true)
        third.container.accountKeys?.keepVerdicts()
        third.engine.stop()
        let fourth = try sandbox.client()
        defer { fourth.engine.stop() }
        let fourthKeys = try #require(fourth.container.accountKeys)
        let verifiedBefore = fourthKeys.signaturesVerified
        #expect(try fourth.messages(in: name, limit: 1).messages.map(\.verified) == [true])
        #expect(fourthKeys.signaturesVerified == verifiedBefore)
    }

    @Test func theCreatorsDeleteCascadesToEveryonesMessagesAndMemberships() throws {
        let sandbox = try ChatSandbox()
        let alice = try sandbox.client("alice", handle: "alice")
        let bob = try sandbox.client("bob", handle: "bob")
        defer { alice.engine.stop(); bob.engine.stop() }
        let name = try ChannelName("temp")
        try alice.post("from alice", to: name)
        try bob.post("from bob", to: name)
        alice.flush(); bob.flush()
        // Both are the same OS user here; refusing a non-creator is tested end to end with two OS users.
        let channel = try #require(try alice.channel(name))
        #expect(channel.creator == alice.user)
        try alice.deleteChannel(name)
        #expect(try alice.channel(name) == nil)
        let leftovers = try alice.container.publicDatabase.records(matching: Query(recordType: ChatSchema.messageType), resultsLimit: 100).records
            + alice.container.publicDatabase.records(matching: Query(recordType: ChatSchema.membershipType), resultsLimit: 100).records
        #expect(leftovers.isEmpty)
    }

    @Test func editsMarkTheMessageAndConflictsAreDecidedByChangeTag() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        defer { client.engine.stop() }
        let name = try ChannelName("edits")
        try client.post("frist", to: name)
        client.flush()
        try client.edit("last", text: "first", in: name)
        client.flush()
        let message = try #require(client.messages(in: name).messages.last)
        #expect(message.text == "first")
        #expect(message.edited)
        #expect(EventFormatter(json: false).message(message).hasSuffix("first (edited)"))

        // A stale copy loses: its change tag no longer matches.
        var stale = try client.container.publicDatabase.record(for: message.recordID)
        try client.edit("last", text: "second", in: name)
        client.flush()
        stale["text"] = "stale"
        let error = #expect(throws: StoreError.self) { try client.container.publicDatabase.save(stale) }
        #expect(error?.code == .serverRecordChanged)
        #expect(try client.messages(in: name).messages.last?.text == "second")
    }

    @Test func anUnsentMessageCanBeEditedOrDeletedBeforeItGoesOut() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        client.engine.stop()
        let name = try ChannelName("quick")
        try client.createChannel(name)
        try client.post("typo", to: name)
        try client.edit("last", text: "fixed", in: name)
        #expect(try client.engine.outboxEntries().compactMap { $0.record?["text"]?.stringValue } == ["fixed"])
        try client.deleteMessage("last", in: name)
        #expect(try client.engine.outboxEntries().filter { $0.recordType == ChatSchema.messageType }.isEmpty)
    }

    @Test func readMarkersSurviveARestart() throws {
        let sandbox = try ChatSandbox()
        let name = try ChannelName("news")
        do {
            let other = try sandbox.client("writer")
            defer { other.engine.stop() }
            for i in 0..<3 { try other.post("item \(i)", to: name) }
            other.flush()
        }
        do {
            let reader = try sandbox.client("reader")
            defer { reader.engine.stop() }
            #expect(try reader.unreadCount(name) == 0, "same OS user: its own messages are never unread")
        }
        // Markers are per private database: a second "user" directory sees unread, marks, restarts.
        let reader = try sandbox.client("reader")
        let messages = try reader.messages(in: name).messages
        try reader.markRead(name, upTo: messages[1].date)
        reader.engine.stop()
        let again = try sandbox.client("reader")
        defer { again.engine.stop() }
        #expect(again.lastRead(name) == messages[1].date)
    }

    @Test func searchFindsWordsIgnoringCaseAndAccents() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        defer { client.engine.stop() }
        let name = try ChannelName("food")
        try client.post("Lunch at the Café tomorrow?", to: name)
        try client.post("no coffee today", to: name)
        client.flush()
        #expect(try client.search("cafe").map(\.text) == ["Lunch at the Café tomorrow?"])
        #expect(try client.search("TOMORROW lunch").count == 1)
        #expect(try client.search("tea").isEmpty)
    }

    @Test func theDefaultHandleIsTheOSUserAndNickPersists() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        defer { client.engine.stop() }
        #expect(client.handle == client.container.currentUser.userName)
        try client.setHandle("ada")
        #expect(client.handle == "ada")
        #expect(throws: CommandError.self) { try client.setHandle("has space") }
        client.flush()
        let again = try sandbox.client()
        defer { again.engine.stop() }
        #expect(again.handle == "ada")
        #expect(try again.container.publicDatabase.record(for: again.userRecordID)["handle"] == "ada")
    }

    @Test func discoveryIsOptIn() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        defer { client.engine.stop() }
        try client.setHandle("grace")
        try client.setProfile(firstName: "Grace", lastName: "Hopper", email: "Grace@Example.org", discoverable: nil)
        client.flush()
        #expect(try client.container.publicDatabase.record(for: client.userRecordID)["lastName"] == "Hopper",
                "outbox: \((try? client.engine.outboxEntries().map { "\($0.state) \($0.record?.fields ?? [:])" }) ?? [])")
        #expect(try client.lookUp("grace").isEmpty)
        #expect(try client.lookUp("grace@example.org").isEmpty)
        try client.setProfile(firstName: nil, lastName: nil, email: nil, discoverable: true)
        client.flush()
        let stored = try client.container.publicDatabase.record(for: client.userRecordID)
        #expect(stored["discoverable"] == 1, "\(stored.fields) outbox: \((try? client.engine.outboxEntries().map(\.state)) ?? [])")
        #expect(try client.lookUp("grace").map(\.lastName) == ["Hopper"], "\(stored.fields)")
        #expect(try client.lookUp("GRACE@example.org").map(\.handle) == ["grace"])
    }

    @Test func aMessageToAChannelDeletedMeanwhileIsKeptAndReported() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        let name = try ChannelName("vanishing")
        try client.join(name)
        client.flush()
        client.engine.stop()
        let queued = try client.post("still here?", to: name)
        try client.container.publicDatabase.deleteRecord(withID: name.recordID)

        let again = try sandbox.client()
        defer { again.engine.stop() }
        again.flush()
        guard case .failed(let code, _) = try again.engine.state(of: queued.recordID) else {
            Issue.record("the message should have failed")
            return
        }
        #expect(code == .referenceViolation)
        #expect(try again.engine.outboxEntries().first?.record?["text"] == "still here?")

        // /retry puts it back in line; it fails again while the channel is gone.
        let session = ChatSession(client: again)
        guard case .outboxChanged(let retried) = try session.run(.retry) else {
            Issue.record("/retry should report an outbox change")
            return
        }
        #expect(retried.contains("1 change"), "\(retried)")
        again.flush()
        guard case .failed = try again.engine.state(of: queued.recordID) else {
            Issue.record("the retried message should have failed again")
            return
        }
        // Once the channel is back, /retry sends it.
        try again.createChannel(name)
        _ = try session.run(.retry)
        again.flush()
        #expect(try again.engine.state(of: queued.recordID) == .sent)
        #expect(try again.container.publicDatabase.record(for: queued.recordID)["text"] == "still here?")
        guard case .outboxChanged(let nothing) = try session.run(.discard) else {
            Issue.record("/discard should report an outbox change")
            return
        }
        #expect(nothing == "Nothing failed to send.")
    }

    @Test func discardDropsWhatFailedAndNothingElse() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        defer { client.engine.stop() }
        let name = try ChannelName("doomed")
        try client.join(name)
        client.flush()
        client.engine.stop()
        let lost = try client.post("into the void", to: name)
        try client.container.publicDatabase.deleteRecord(withID: name.recordID)
        let kept = try client.post("after the fact", to: try ChannelName("elsewhere"))

        let again = try sandbox.client()
        defer { again.engine.stop() }
        again.flush()
        #expect(try again.engine.state(of: kept.recordID) == .sent)
        guard case .failed = try again.engine.state(of: lost.recordID) else {
            Issue.record("the message to the deleted channel should have failed")
            return
        }
        guard case .outboxChanged(let text) = try ChatSession(client: again).run(.discard) else {
            Issue.record("/discard should report an outbox change")
            return
        }
        #expect(text.contains("Dropped 1 change"), "\(text)")
        #expect(try again.engine.outboxEntries().isEmpty)
        #expect((try? again.container.publicDatabase.record(for: lost.recordID)) == nil)
        #expect(try again.container.publicDatabase.record(for: kept.recordID)["text"] == "after the fact")
    }
}
