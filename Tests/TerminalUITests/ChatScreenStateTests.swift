import Foundation
import Testing
@testable import FatchatCore
@testable import TerminalUI

/// The value types that hold the client controller's state, without a container.
@Suite struct ChatScreenStateTests {
    private func channel(_ name: String, created: TimeInterval) throws -> Channel {
        let name = try ChannelName(name)
        return Channel(name: name, topic: "", creator: nil, created: Date(timeIntervalSince1970: created), recordID: name.recordID)
    }

    @Test func theRosterKeepsChannelsInOrderOfCreationOnceEach() throws {
        var roster = ChannelRoster()
        roster.add(try channel("late", created: 30))
        roster.add(try channel("early", created: 10))
        roster.add(try channel("late", created: 30))
        #expect(roster.channels.map(\.name.display) == ["early", "late"])

        let late = try ChannelName("late").id
        roster.unread[late] = 4
        roster.mentions.insert(late)
        roster.histories[late] = InputHistory()
        roster.seen(late)
        #expect(roster.unread[late] == 0 && !roster.mentions.contains(late))
        roster.mentions.insert(late)
        roster.remove(late)
        #expect(roster.channels.map(\.name.display) == ["early"])
        #expect(roster.unread[late] == nil && !roster.mentions.contains(late))
        #expect(roster.histories[late] != nil, "what was typed there comes back with the channel")
    }

    @Test func theSyncLineSaysWhatItWaitsFor() throws {
        var line = SyncLine()
        let now = Date()
        #expect(line.describe(now: now) == "connecting")
        line.state = "online"
        line.lockedBuffer = .channel(try ChannelName("ops"))
        #expect(line.describe(now: now) == "waiting for the database: locked")
        line.waitingSince = now.addingTimeInterval(-12.4)
        #expect(line.describe(now: now) == "waiting for the database: locked for 12 s")
        line.waitingSince = nil
        line.lockedBuffer = nil
        #expect(line.describe(now: now) == "online")
    }
}
