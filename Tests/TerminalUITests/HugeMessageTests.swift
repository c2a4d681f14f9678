import Foundation
import Testing
@testable import FatchatCore
@testable import RecordStore
@testable import TerminalUI

/// A message of any size costs the client no more than its first 16 KB, once: a keystroke
/// after it re-wraps nothing.
@Suite struct HugeMessageTests {
    static let twentyMB = String(repeating: "0123456789abcdef ", count: 20 * 1024 * 1024 / 17)

    @Test func aMessageKeepsOnlyItsBoundedPrefix() {
        let item = MessageItem(id: "big", time: Date(), handle: "eve", userID: "_1009_eve", text: Self.twentyMB)
        #expect(item.text.utf8.count <= TextPrefix.messageBytes)
        #expect(item.text.utf8.count > TextPrefix.messageBytes - 4)
        #expect(item.omittedBytes == Self.twentyMB.utf8.count - item.text.utf8.count)
        let small = MessageItem(id: "s", time: Date(), handle: "eve", userID: "_1009_eve", text: "short")
        #expect(small.text == "short" && small.omittedBytes == 0)
        // A cut never splits a scalar: 4-byte emoji, cut at any byte.
        for limit in 0..<9 {
            let prefix = TextPrefix("🍕🍕🍕", limit: limit)
            #expect(prefix.shown == String(repeating: "🍕", count: limit / 4))
            #expect(prefix.omittedBytes == 12 - 4 * (limit / 4))
        }
    }

    @Test func aTwentyMegabyteMessageRendersItsStartAndHowMuchMore() {
        var state = ClientViewState()
        state.messages = [MessageItem(id: "big", time: Date(), handle: "eve", userID: "_1009_eve", text: Self.twentyMB)]
        let screen = ClientRenderer.render(state, editor: LineEditor(), width: 80, height: 24, options: RenderOptions(usesColor: false))
        let omittedKB = (Self.twentyMB.utf8.count - state.messages[0].text.utf8.count + 1023) / 1024
        #expect(screen.lines.contains { $0.contains("… \(omittedKB) KB more") }, "\(screen.lines)")
        #expect(omittedKB > 20_000)
    }

    @Test func aKeystrokeAfterAHugeMessageReWrapsNothing() {
        var state = ClientViewState()
        state.members = [MemberItem(handle: "eve", userID: "_1009_eve")]
        state.messages = [MessageItem(id: "big", time: Date(), handle: "eve", userID: "_1009_eve", text: Self.twentyMB)]
            + (0..<30).map { MessageItem(id: "m\($0)", time: Date(), handle: "eve", userID: "_1009_eve", text: "line \($0)") }
        let options = RenderOptions(usesColor: false)
        var editor = LineEditor()
        _ = ClientRenderer.render(state, editor: editor, width: 80, height: 24, options: options)
        #expect(options.lineCache.wrapCount == 31, "the first frame wraps every message once")

        var screen = Screen(width: 0, height: 0)
        for character in "typing along" {
            editor.insert(String(character))
            screen = ClientRenderer.render(state, editor: editor, width: 80, height: 24, options: options)
        }
        #expect(screen.lines.last?.hasSuffix("typing along") == true, "\(screen.lines)")
        #expect(options.lineCache.wrapCount == 31, "keystrokes re-wrap nothing")

        // A new message wraps only itself; a resize re-wraps everything, once.
        state.messages.append(MessageItem(id: "new", time: Date(), handle: "eve", userID: "_1009_eve", text: "one more"))
        _ = ClientRenderer.render(state, editor: editor, width: 80, height: 24, options: options)
        #expect(options.lineCache.wrapCount == 32)
        _ = ClientRenderer.render(state, editor: editor, width: 60, height: 24, options: options)
        _ = ClientRenderer.render(state, editor: editor, width: 60, height: 24, options: options)
        #expect(options.lineCache.wrapCount == 32 + 32)
    }

    /// The same through the client's controller: the message arrives as a chat event, keys are typed.
    @Test func theClientStaysBoundedWhenAHugeMessageArrives() throws {
        let sandbox = ChatScreenTests.Sandbox()
        let options = RenderOptions(usesColor: false)
        let screen = try ChatScreen(client: try sandbox.client(), width: 80, height: 24, renderOptions: options)
        var record = Record(recordType: ChatSchema.messageType)
        record["channel"] = .reference(Reference(recordID: RecordID(recordName: "channel.general"), action: .deleteSelf))
        record["text"] = .string(Self.twentyMB)
        record["handle"] = .string("eve")
        record.creatorUserRecordID = RecordID(recordName: "_1009_eve")
        record.creationDate = Date()
        let message = try #require(Message(record))
        screen.handle(.message(message))
        #expect(screen.render().lines.contains { $0.contains("KB more") })
        #expect(screen.state.messages.allSatisfy { $0.text.utf8.count <= TextPrefix.messageBytes })
        let wrapped = options.lineCache.wrapCount
        for character in "hello" {
            screen.handle(.key(.character(character)))
            _ = screen.render()
        }
        #expect(options.lineCache.wrapCount == wrapped, "typing re-wraps no message")
    }
}
