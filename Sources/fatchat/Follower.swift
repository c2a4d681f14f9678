import FatchatCore
import Foundation

/// `fatchat read --follow`: prints a channel's new messages as they arrive.
final class Follower {
    let client: ChatClient
    let channel: ChannelName
    private var formatter: EventFormatter

    init(client: ChatClient, channel: ChannelName, formatter: EventFormatter) {
        self.client = client
        self.channel = channel
        self.formatter = formatter
    }

    /// Prints until the channel is deleted; an interrupt ends the process.
    func run() throws {
        client.start()
        defer { client.stop() }
        guard let channelID = try client.channel(channel)?.id else { return }
        let loop = try EventLoop()
        // `unowned loop`: the loop keeps this handler, which must not keep the loop in turn.
        loop.watch(client.eventDescriptor) { [self, unowned loop] _ in
            for chat in client.drainEvents() {
                guard show(chat, in: channelID) else { return loop.stop() }
            }
        }
        try loop.run()
    }

    /// Prints `event` if it is about the channel; false once the channel is gone.
    private func show(_ event: ChatEvent, in channelID: ChannelID) -> Bool {
        switch event {
        case .message(let message) where message.channel == channelID:
            formatter.learn(message)
            say(formatter.message(message))
        case .messageEdited(let message) where message.channel == channelID:
            formatter.learn(message)
            say(formatter.message(message, type: "edited"))
        case .channelDeleted(_, let id) where id == channelID:
            say(formatter.event("channel_deleted", ["channel": channel.display, "text": "#\(channel.display) was deleted"]))
            return false
        default:
            break
        }
        return true
    }
}
