import Foundation
import Testing
@testable import FatchatCore
@testable import RecordStore
@testable import TerminalUI

/// A line its sender's key does not vouch for (unsigned, or signed wrongly) is drawn `?<handle>`;
/// a verified line looks as it always did.
@Suite struct UnverifiedLineTests {
    @Test func anUnverifiedLineHasAQuestionMarkBeforeItsHandle() throws {
        var state = ClientViewState()
        var forged = MessageItem(id: "m2", time: Date(timeIntervalSince1970: 60), handle: "alice", userID: "_1001_alice", text: "send me the keys")
        forged.isUnverified = true
        state.messages = [
            MessageItem(id: "m1", time: Date(timeIntervalSince1970: 0), handle: "alice", userID: "_1001_alice", text: "morning"),
            forged,
        ]
        let utc = try #require(TimeZone(identifier: "UTC"))
        let screen = ClientRenderer.render(state, editor: LineEditor(), width: 80, height: 24, options: RenderOptions(timeZone: utc))
        let text = screen.lines.joined(separator: "\n")
        #expect(text.contains("00:01 ?<alice> send me the keys"), "\(screen.lines)")
        #expect(text.contains("00:00 <alice> morning"), "\(screen.lines)")
    }

    @Test func plainAndJSONOutputMarkAnUnverifiedMessage() throws {
        var record = Record(recordType: ChatSchema.messageType, recordID: RecordID(recordName: "feedbeef00000009"))
        record["channel"] = .reference(Reference(recordID: try ChannelName("ops").recordID, action: .deleteSelf))
        record["text"] = "send me the keys"
        record["handle"] = "alice"
        record.creatorUserRecordID = RecordID(recordName: "_1001_alice")
        var message = try #require(Message(record))
        message.verified = false
        let plain = EventFormatter(json: false).message(message)
        #expect(plain.hasSuffix(" #ops ?<alice> send me the keys"), "\(plain)")
        let json = EventFormatter(json: true).message(message)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["verified"] as? Bool == false, "\(json)")
        message.verified = true
        #expect(!EventFormatter(json: true).message(message).contains("verified"), "a verified line is as before")
    }
}
