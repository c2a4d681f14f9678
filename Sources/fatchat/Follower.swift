import FatchatCore
import Foundation

/// `fatchat read --follow`: prints a channel's new messages as they arrive.
struct Follower {
    let client: ChatClient
    let channel: ChannelName
    var formatter: EventFormatter

    mutating func run() throws {
        client.start()
        defer { client.stop() }
        guard let channelID = try client.channel(channel)?.id else { return }
        while true {
            var fds = [pollfd(fd: client.eventDescriptor, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 1, -1) < 0, errno != EINTR { return }
            for chat in client.drainEvents() {
                switch chat {
                case .message(let message) where message.channel == channelID:
                    formatter.learn(message)
                    say(formatter.message(message))
                case .messageEdited(let message) where message.channel == channelID:
                    formatter.learn(message)
                    say(formatter.message(message, type: "edited"))
                case .channelDeleted(_, let id) where id == channelID:
                    say(formatter.event("channel_deleted", ["channel": channel.display, "text": "#\(channel.display) was deleted"]))
                    return
                default:
                    break
                }
            }
        }
    }
}
