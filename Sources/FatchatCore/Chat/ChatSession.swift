import Foundation

/// What running a command produced, for the client or the bot to show.
public enum CommandResult: Sendable {
    /// Nothing to show.
    case done
    /// A message was queued, as it reads until sent; it shows as pending until it is sent.
    case queued(Message)
    /// A line of information.
    case info(String)
    /// The outbox changed (`/retry`, `/discard`): what is shown as pending or failed should be read again.
    case outboxChanged(String)
    /// The current channel changed.
    case switched(to: ChannelName, created: Bool)
    /// The current channel is gone (left or deleted); `next` is where to go, if anywhere.
    case left(ChannelName, next: ChannelName?)
    case channels([Channel])
    case members(ChannelName, [Member])
    case topic(ChannelName, String)
    case searchResults(String, [Message])
    /// A message's reactions, each emoji with who reacted.
    case reactions(Message, [ReactionCount])
    /// My highlight words after `/highlight`, with a line saying what changed.
    case highlights([String], note: String)
    /// A direct message was queued, as it reads until sent.
    case directMessageQueued(DirectMessage)
    /// The direct messages between me and an account, oldest first.
    case conversation(with: UserID, [DirectMessage])
    case help(String)
    case quit
}

/// One person's (or bot's) use of the chat: the current channel, and the commands they run.
///
/// The full-screen client and the bot both run commands through here, so the
/// grammar and its behaviour are the same in both.
public final class ChatSession {
    public let client: ChatClient
    /// The channel plain lines are posted to; nil while a direct conversation is current.
    public private(set) var current: ChannelName? {
        didSet { if current != nil { conversation = nil } }
    }
    /// The account plain lines go to as direct messages (the full-screen client's `@user`), instead of a channel.
    public private(set) var conversation: UserID?
    /// What this front end says of my presence; `nil` until ``startPresence(autoAwayAfter:now:)``.
    public private(set) var beacon: PresenceBeacon?
    private var typing = TypingThrottle()
    /// The browsers `/open` started, reaped by ``tickPresence(now:)``.
    public let helpers = DetachedProcesses()
    /// The environment `/open` reads `$BROWSER` from.
    public var environment = ProcessInfo.processInfo.environment

    public init(client: ChatClient, current: ChannelName? = nil) {
        self.client = client
        self.current = current
    }

    /// Switches the current channel without a command (Alt-1, Ctrl-N and the like).
    public func select(_ channel: ChannelName) { current = channel }

    /// Makes the direct conversation with `peer` current: plain lines go to them, sealed, and no channel is current.
    public func select(conversation peer: UserID) {
        current = nil
        conversation = peer
    }

    /// Runs one command.
    public func run(_ command: Command) throws -> CommandResult {
        switch command {
        case .post(nil, let text) where conversation != nil:
            return .directMessageQueued(try client.sendDirectMessage(text, to: conversation?.rawValue ?? ""))
        case .post(let channel, let text):
            return .queued(try client.post(text, to: try target(channel)))
        case .join(let raw):
            let name = try ChannelName(raw)
            let (channel, created) = try client.join(name)
            current = channel.name
            return .switched(to: channel.name, created: created)
        case .leave(let raw):
            let name = try target(raw)
            try client.leave(name)
            return .left(name, next: try moveAway(from: name))
        case .create(let raw, let topic):
            // Queued like a join, so that a lock on the file holds nobody up; a name
            // that someone takes before it is sent ends as a join of their channel.
            let name = try ChannelName(raw)
            if try client.channel(name) != nil {
                throw ChatClient.alreadyExists(name)
            }
            let joined = try client.join(name, topic: topic)
            current = joined.channel.name
            return .switched(to: joined.channel.name, created: true)
        case .delete(let raw):
            let name = try ChannelName(raw)
            try client.deleteChannel(name, queued: true)
            return .left(name, next: try moveAway(from: name))
        case .topic(let raw, let text):
            let name = try target(raw)
            if let text {
                try client.setTopic(text, of: name, queued: true)
                return .topic(name, text)
            }
            return .topic(name, try client.existingChannel(name).topic)
        case .nick(let handle):
            try client.setHandle(handle)
            return .info("You are now known as \(handle).")
        case .who(let raw):
            let name = try target(raw)
            var members = try client.members(of: name)
            let presence = (try? client.presence(of: members.map(\.user))) ?? [:]
            for index in members.indices { members[index].presence = presence[members[index].user] }
            return .members(name, members)
        case .channels:
            return .channels(try client.channels())
        case .attach(let path, let channel):
            return .queued(try client.attach(path, to: try target(channel)))
        case .save(let message, let path):
            try client.saveAttachment(of: message, to: path, in: current)
            return .info("Saved to \(path).")
        case .edit(let message, let text):
            try client.edit(message, text: text, in: current)
            return .done
        case .deleteMessage(let message) where conversation != nil && message.lowercased() == "last":
            try client.deleteDirectMessage(message, with: conversation)
            return .done
        case .deleteMessage(let message):
            do {
                try client.deleteMessage(message, in: current)
            } catch let error as CommandError where error.message.hasPrefix("No message has the ID") {
                // Not a channel's message: it may be a direct message of mine.
                try client.deleteDirectMessage(message)
            }
            return .done
        case .directMessage(let to, let text):
            return .directMessageQueued(try client.sendDirectMessage(text, to: to))
        case .query(let with):
            let (peer, messages) = try client.directMessages(with: with)
            return .conversation(with: peer, messages)
        case .search(let text):
            return .searchResults(text, try client.search(text))
        case .reply(let message, let text):
            return .queued(try client.reply(to: message, text: text, in: try target(nil)))
        case .react(let message, let reaction):
            try client.react(to: message, with: reaction, in: current)
            return .done
        case .unreact(let message, let reaction):
            try client.unreact(to: message, with: reaction, in: current)
            return .done
        case .reactions(let message):
            let (found, counts) = try client.reactions(of: message, in: current)
            return .reactions(found, counts)
        case .action(let channel, let text):
            return .queued(try client.post(text, to: try target(channel), action: true))
        case .highlight(let change):
            switch change {
            case .add(let word):
                return .highlights(try client.addHighlight(word), note: "Highlighting \(word.lowercased()).")
            case .remove(let word):
                return .highlights(try client.removeHighlight(word), note: "No longer highlighting \(word.lowercased()).")
            case .list:
                let words = client.highlightWords()
                return .highlights(words, note: words.isEmpty ? "No highlight words; /highlight add WORD adds one." : "Highlight words: " + words.joined(separator: " "))
            }
        case .retry:
            let count = try client.retryFailed()
            return .outboxChanged(count == 0 ? "Nothing failed to send." : "Sending again \(Self.changes(count)) that failed.")
        case .discard:
            let count = try client.discardFailed()
            return .outboxChanged(count == 0 ? "Nothing failed to send." : "Dropped \(Self.changes(count)) that failed to send.")
        case .help(let topic):
            return .help(try Help.text(for: topic))
        case .quit:
            return .quit
        case .away(let reason):
            if reason == nil, beacon?.isAwayByChoice == true { return try run(.back) }
            let write = beacon(orNew: { $0.away(reason ?? "") })
            return .info(write.reason.isEmpty ? "You are away." : "You are away: \(write.reason)")
        case .back:
            _ = beacon(orNew: { $0.back() })
            return .info("You are back.")
        case .typing(let raw):
            client.announceTyping(in: try target(raw))
            return .done
        case .open(let index):
            let link = try recentLink(index)
            let browser = Links.browser(environment: environment)
            do {
                try helpers.start([browser, link])
            } catch {
                throw CommandError(error.description + " Set $BROWSER to the program that opens links.")
            }
            return .info("Opening \(link) with \(browser)")
        }
    }

    // MARK: Presence and typing

    /// Says I am online, and from now on keeps saying what ``tickPresence(now:)`` finds;
    /// `autoAwayAfter` seconds without activity make me away (nil: never).
    public func startPresence(autoAwayAfter: TimeInterval?, now: Date = Date()) {
        var made = PresenceBeacon(autoAwayAfter: autoAwayAfter, now: now)
        publish(made.start(now: now), now: now)
        beacon = made
    }

    /// A tick (about once a second): the heartbeat when due, going idle, and reaping finished helpers.
    public func tickPresence(now: Date = Date()) {
        helpers.reap(now: now)
        if let write = beacon?.tick(now: now) { publish(write, now: now) }
    }

    /// A key or a line: an idle client is back.
    public func noteActivity(now: Date = Date()) {
        if let write = beacon?.activity(now: now) { publish(write, now: now) }
    }

    /// A key that edits a message (not a command) in the current channel: says I am typing, at most every few seconds.
    public func noteTyping(now: Date = Date()) {
        guard let current, typing.shouldAnnounce(in: current, now: now) else { return }
        client.announceTyping(in: current, at: now)
    }

    /// A line was sent: the next key is a new bout of typing.
    public func noteSent() { typing.reset() }

    /// Says I am offline (last seen now), waiting at most `timeout` seconds for it to be written.
    public func stopPresence(timeout: Double = 1, now: Date = Date()) {
        guard beacon != nil else { return }
        beacon = nil
        client.publishPresence(.offline, at: now)
        client.flushEphemeral(timeout: timeout)
    }

    private func beacon(orNew change: (inout PresenceBeacon) -> PresenceBeacon.Write) -> PresenceBeacon.Write {
        var changed = beacon ?? PresenceBeacon(autoAwayAfter: nil)
        let write = change(&changed)
        beacon = changed
        publish(write, now: Date())
        return write
    }

    private func publish(_ write: PresenceBeacon.Write, now: Date) {
        client.publishPresence(write.state, reason: write.reason, at: now)
    }

    /// The `index`th newest link in the current channel's newest messages (1 is the newest).
    private func recentLink(_ index: Int) throws -> String {
        let name = try target(nil)
        let page = try client.messages(in: name, limit: 200)
        let links = page.messages.reversed().flatMap { Links.find(in: $0.text).reversed() }
        guard index <= links.count else {
            throw CommandError(links.isEmpty ? "No link in the newest messages of \(name)." :
                               "\(name) has \(links.count) link\(links.count == 1 ? "" : "s") in its newest messages; /open 1 is the newest.")
        }
        return try Links.check(links[index - 1])
    }

    /// The named channel, else the current one, else a clear error.
    private func target(_ raw: String?) throws -> ChannelName {
        if let raw { return try ChannelName(raw) }
        guard let current else {
            if let conversation { throw CommandError("\(conversation.rawValue) is a direct conversation, not a channel: name the channel, or switch to one.") }
            throw CommandError("No current channel: /join CHANNEL first.")
        }
        return current
    }

    /// After leaving or deleting `name`: another joined channel becomes current, if there is one.
    private func moveAway(from name: ChannelName) throws -> ChannelName? {
        guard current == name else { return current }
        current = try client.joinedChannels().map(\.name).first { $0 != name }
        return current
    }

    private static func changes(_ count: Int) -> String { count == 1 ? "1 change" : "\(count) changes" }
}
