import Foundation
import Testing
@testable import FatchatCore

/// The API a front end uses: events by descriptor and drain, history cursors, messages still going out.
@Suite struct ChatClientDoorTests {
    /// Drains `client`'s events until `found` returns a value, waiting on its descriptor; at most `seconds`.
    private func awaitEvent<T>(_ client: ChatClient, seconds: Double = 10, _ found: (ChatEvent) -> T?) -> T? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            for event in client.drainEvents() {
                if let value = found(event) { return value }
            }
            var fds = [pollfd(fd: client.eventDescriptor, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 1, 200)
        }
        return nil
    }

    @Test func drainingAfterAnotherClientSavesYieldsTheMessageWithItsID() throws {
        let sandbox = try ChatSandbox()
        let alice = try sandbox.client("alice", handle: "alice")
        let bob = try sandbox.client("bob", handle: "bob")
        defer { alice.stop(); bob.stop() }
        // Bob's first status follows his first fetch, which fixes where his feed starts.
        #expect(awaitEvent(bob) { if case .status = $0 { true } else { nil } } == true)
        let posted = try alice.post("hello bob", to: try ChannelName("door"))
        #expect(alice.waitUntilSent(timeout: 10))
        let received = awaitEvent(bob) { event -> Message? in
            if case .message(let message) = event, message.id == posted.id { message } else { nil }
        }
        #expect(received?.text == "hello bob")
        #expect(received?.channel == (try ChannelName("door")).id)
        #expect(received?.sender == alice.user)
        #expect(bob.queuedHere(posted.id) == false && alice.queuedHere(posted.id))
    }

    @Test func historyCursorsPageBothWaysWithoutRepeats() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        defer { client.stop() }
        let name = try ChannelName("pages")
        for i in 0..<23 { try client.post("line \(i)", to: name) }
        #expect(client.waitUntilSent(timeout: 10))

        var backward: [Message] = []
        var page = try client.messages(in: name, limit: 5)
        backward = page.messages
        var pages = 1
        while let older = page.older {
            page = try client.messages(in: name, limit: 5, older: older)
            backward = page.messages + backward
            pages += 1
        }
        #expect(pages == 5)
        #expect(backward.map(\.text) == (0..<23).map { "line \($0)" })
        #expect(Set(backward.map(\.id)).count == 23)

        var forward = try client.messagesFromStart(in: name, limit: 5)
        var all = forward.messages
        while let newer = forward.newer {
            forward = try client.messagesFromStart(in: name, limit: 5, newer: newer)
            all += forward.messages
        }
        #expect(all.map(\.id) == backward.map(\.id))
    }

    @Test func messagesGoingOutAreListedThenClearedOnceSent() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        client.stop()
        let ops = try ChannelName("ops")
        let first = try client.post("one", to: ops)
        let second = try client.post("two", to: ops)
        try client.post("elsewhere", to: try ChannelName("other"))

        let going = try client.outgoingMessages(in: ops)
        #expect(going.map(\.message.text) == ["one", "two"])
        #expect(going.map(\.message.id) == [first.id, second.id])
        #expect(going.allSatisfy { !$0.failed && $0.message.sender == client.user })
        #expect(try client.outgoingMessages().count == 3)
        #expect(try client.deliveryState(of: first.id) == .pending)

        // A stopped client's events are over: the same user's next run sends what it left.
        let again = try sandbox.client()
        defer { again.stop() }
        // Every message sent is named by its own `.sent` event.
        var sent: Set<MessageID> = []
        let both = awaitEvent(again) { event -> Bool? in
            if case .sent(let id) = event { sent.insert(id) }
            return sent.isSuperset(of: [first.id, second.id]) ? true : nil
        }
        #expect(both == true, "\(sent)")
        #expect(try again.outgoingMessages(in: ops).isEmpty)
        #expect(try again.deliveryState(of: second.id) == .sent)
        #expect(try again.messages(in: ops).messages.map(\.id) == [first.id, second.id])
    }

    @Test func everythingGoingOutCanBeDropped() throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client()
        client.stop()
        let posted = try client.post("never mind", to: try ChannelName("drop"))
        #expect(try client.discardOutgoing() >= 1)
        #expect(try client.outgoingMessages().isEmpty)
        #expect(try client.deliveryState(of: posted.id) != .pending)
    }
}
