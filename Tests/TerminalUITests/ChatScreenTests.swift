import Foundation
import Testing
@testable import FatchatCore
@testable import RecordStore
import SyncEngine
@testable import TerminalUI

/// The client's controller, headless: a real container, keys in, the screen model out.
@Suite struct ChatScreenTests {
    final class Sandbox {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("fatchat-screen-\(UUID().uuidString)")
        deinit { try? FileManager.default.removeItem(at: root) }

        func client(_ name: String = "me", handle: String = "ada") throws -> ChatClient {
            let container = try Container(url: root.appendingPathComponent("chat"),
                                          options: Container.Options(privateDataDirectory: root.appendingPathComponent("data-\(name)")))
            var configuration = SyncEngine.Configuration()
            configuration.pollInterval = 0.1
            return try ChatClient(container: container, handle: handle, configuration: configuration)
        }
    }

    private func type(_ text: String, into screen: ChatScreen) {
        for character in text { screen.handle(.key(.character(character))) }
        screen.handle(.key(.enter))
    }

    @Test func aFirstRunJoinsGeneralAndDrawsTheFrame() throws {
        let sandbox = Sandbox()
        let screen = try ChatScreen(client: try sandbox.client(), width: 80, height: 24, renderOptions: RenderOptions(usesColor: false))
        let lines = screen.render().lines
        #expect(lines.count == 24)
        #expect(lines[0].contains("#general"))
        #expect(lines[1].hasPrefix("#general"))
        #expect(lines[22].contains("[ada]"))
        #expect(lines[23].hasPrefix("[#general]"))
    }

    @Test func aRestartOpensTheChannelLeftOnScreenAndListsTheRestJustAfter() throws {
        let sandbox = Sandbox()
        let client = try sandbox.client()
        client.start()
        defer { _ = client.stop() }
        let screen = try ChatScreen(client: client, width: 80, height: 24, renderOptions: RenderOptions(usesColor: false))
        type("/join beta", into: screen)
        type("/join gamma", into: screen)
        type("/join beta", into: screen)
        #expect(client.waitUntilSent(timeout: 10))
        screen.finish(timeout: 0)

        let again = try ChatScreen(client: client, width: 80, height: 24, renderOptions: RenderOptions(usesColor: false))
        #expect(again.state.channels.map(\.name) == ["#beta"], "the first frame has the channel left on screen alone")
        #expect(again.state.title?.name == "#beta")
        again.loadChannelList()
        #expect(again.state.channels.map(\.name) == ["#general", "#beta", "#gamma"])
        #expect(again.state.channels.filter(\.isCurrent).map(\.name) == ["#beta"])
        again.loadChannelList()
        #expect(again.state.channels.count == 3, "read once")

        // A channel I have left since is not opened: the start lists my channels and opens the oldest.
        try client.leave(try ChannelName("beta"))
        #expect(client.waitUntilSent(timeout: 10))
        let third = try ChatScreen(client: client, width: 80, height: 24, renderOptions: RenderOptions(usesColor: false))
        #expect(third.state.channels.map(\.name) == ["#general", "#gamma"])
        #expect(third.state.title?.name == "#general")
    }

    @Test func myMessageShowsAtOnceAsPendingThenSent() throws {
        let sandbox = Sandbox()
        let client = try sandbox.client()
        let screen = try ChatScreen(client: client, width: 80, height: 24, renderOptions: RenderOptions(usesColor: false))
        type("hello world", into: screen)
        #expect(screen.state.messages.last?.text == "hello world")
        #expect(screen.state.messages.last?.delivery == .pending)
        // The handle ada is not the OS user's name, so the account shows beside it.
        #expect(screen.render().lines.contains { $0.contains("<ada (\(UserIdentity.current.userName))> hello world") })

        client.start()
        defer { client.stop() }
        #expect(client.waitUntilSent(timeout: 10))
        let deadline = Date().addingTimeInterval(10)
        while screen.state.messages.last?.delivery != .sent, Date() < deadline {
            client.drainEvents().forEach(screen.handle)
            usleep(20_000)
        }
        #expect(screen.state.messages.last?.delivery == .sent)
        #expect(screen.state.messages.filter { $0.text == "hello world" }.count == 1, "the fetched copy replaces the pending one")
    }

    @Test func scrollbackLoadsOlderPagesLazily() throws {
        let sandbox = Sandbox()
        let writer = try sandbox.client("writer", handle: "bob")
        writer.start()
        let general = try ChannelName("general")
        for i in 0..<200 { try writer.post("line \(i)", to: general) }
        #expect(writer.waitUntilSent(timeout: 30))
        writer.stop()

        var options = ChatScreen.Options()
        options.pageSize = 50
        let screen = try ChatScreen(client: try sandbox.client(), width: 80, height: 24, options: options, renderOptions: RenderOptions(usesColor: false))
        #expect(screen.state.messages.count == 50, "only the newest page at first")
        #expect(screen.state.messages.last?.text == "line 199")
        for _ in 0..<3 { screen.handle(.key(.pageUp)) }
        #expect(screen.state.messages.count == 100, "one more page after scrolling past the top")
        #expect(screen.render().lines.contains { $0.contains("new messages below") } == false)
        screen.handle(.key(.home))
        #expect(screen.state.messages.first?.text == "line 0")
        #expect(screen.state.messages.count == 50)
        screen.handle(.key(.end))
        #expect(screen.state.messages.last?.text == "line 199")
        #expect(screen.state.scroll == .bottom)
    }

    @Test func aLongFloodKeepsABoundedSliceThatScrollsBackWithoutGapsOrRepeats() throws {
        let sandbox = Sandbox()
        var options = ChatScreen.Options()
        options.pageSize = 10
        options.maxLoadedMessages = 40
        let reader = try sandbox.client()
        let screen = try ChatScreen(client: reader, width: 80, height: 24, options: options, renderOptions: RenderOptions(usesColor: false))
        reader.start()
        defer { reader.stop() }
        let writer = try sandbox.client("writer", handle: "bob")
        writer.start()
        defer { writer.stop() }
        let general = try ChannelName("general")
        var most = 0
        // In bursts of ten, each seen before the next, as a client keeping up with a flood sees them.
        for burst in 0..<13 {
            for i in burst * 10..<burst * 10 + 10 { try writer.post("line \(i)", to: general) }
            #expect(writer.waitUntilSent(timeout: 30))
            let deadline = Date().addingTimeInterval(30)
            while screen.state.messages.last?.text != "line \(burst * 10 + 9)", Date() < deadline {
                reader.drainEvents().forEach(screen.handle)
                most = max(most, screen.state.messages.count)
                usleep(20_000)
            }
        }
        #expect(screen.state.messages.last?.text == "line 129")
        #expect(most <= 50, "the slice is let go of past 40 messages; it held \(most)")
        #expect(screen.state.messages.count < 130)
        // Scrolling up reads the let-go messages again from the cursor the slice was cut at.
        for _ in 0..<200 where screen.state.messages.first?.text != "line 0" { screen.handle(.key(.pageUp)) }
        #expect(screen.state.messages.map(\.text) == (0..<130).map { "line \($0)" })
    }

    @Test func otherPeoplesEscapesAreDrawnInert() throws {
        let sandbox = Sandbox()
        let client = try sandbox.client()
        let screen = try ChatScreen(client: client, width: 80, height: 24, renderOptions: RenderOptions(usesColor: false))
        var record = Record(recordType: ChatSchema.messageType, recordID: RecordID(recordName: "feedbeef00000001"))
        record["channel"] = .reference(Reference(recordID: try ChannelName("general").recordID, action: .deleteSelf))
        record["text"] = "\u{1B}[2J\u{1B}]0;pwned\u{07}gotcha\r"
        record["handle"] = "eve"
        record.creationDate = Date()
        let message = try #require(Message(record))
        screen.handle(ChatEvent.message(message))
        let frame = screen.render()
        let row = try #require(frame.lines.first { $0.contains("gotcha") })
        #expect(row.contains("^[[2J"))
        #expect(!frame.lines.joined().unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x0D })
    }

    @Test func mentionsRingTheBellWhenAskedAndMarkTheChannel() throws {
        let sandbox = Sandbox()
        let client = try sandbox.client()
        var options = ChatScreen.Options()
        options.bellOnMention = true
        options.desktopNotifications = true
        let screen = try ChatScreen(client: client, width: 80, height: 24, options: options, renderOptions: RenderOptions(usesColor: false))
        #expect(screen.mentionsMe("hey @Ada, look"))
        #expect(screen.mentionsMe("ada: ping"))
        #expect(!screen.mentionsMe("adamant"))
        var record = Record(recordType: ChatSchema.messageType, recordID: RecordID(recordName: "feedbeef00000002"))
        record["channel"] = .reference(Reference(recordID: try ChannelName("general").recordID, action: .deleteSelf))
        record["text"] = "ada: lunch?"
        record["handle"] = "bob"
        record.creatorUserRecordID = RecordID(recordName: "_4242_bob")
        screen.handle(ChatEvent.message(try #require(Message(record))))
        #expect(screen.takeEffects() == [.bell, .desktopNotification(title: "#general <bob>", body: "ada: lunch?")])
    }

    @Test func helpOpensWithF1AndCloses() throws {
        let sandbox = Sandbox()
        let screen = try ChatScreen(client: try sandbox.client(), width: 80, height: 24, renderOptions: RenderOptions(usesColor: false))
        screen.handle(.key(.function(1)))
        #expect(screen.render().lines.contains { $0.contains("Alt-1") })
        screen.handle(.key(.escape))
        #expect(!screen.state.showsHelp)
        type("/help", into: screen)
        #expect(screen.state.showsHelp)
    }

    @Test func outboxCountsComeFromTheStatusAloneNotFromEachSentMessage() throws {
        let sandbox = Sandbox()
        let client = try sandbox.client()
        // The engine is not running: joining #general left three changes in the outbox.
        let screen = try ChatScreen(client: client, width: 80, height: 24, renderOptions: RenderOptions(usesColor: false))
        type("counted once", into: screen)
        let id = try #require(screen.state.messages.last?.id)
        screen.handle(ChatEvent.status(ChatStatus(online: true, pending: 2, failed: 1)))
        #expect(screen.state.status.pendingCount == 2 && screen.state.status.failedCount == 1)
        screen.handle(ChatEvent.sent(MessageID(rawValue: id)))
        #expect(screen.state.messages.last?.delivery == .sent)
        #expect(screen.state.status.pendingCount == 2 && screen.state.status.failedCount == 1, "a sent message does not recount the outbox")
        screen.handle(ChatEvent.sendFailed(MessageID(rawValue: "feedbeef"), reason: "refused"))
        #expect(screen.state.status.failedCount == 1, "nor does a failure: its status follows")
        #expect(screen.state.messages.last?.text == "not sent: refused (it stays in the outbox)")
        #expect(screen.render().lines.contains { $0.contains("2 pending · 1 failed · online") })
    }
}
