import Foundation
import RecordStore
import SyncEngine

/// The headless bot: commands and messages from stdin, events to stdout, one per line.
///
/// An ``EventLoop`` waits on stdin and on the sync engine's descriptor, so it
/// never busy-polls. At end of input it waits for its outbox to empty, for at
/// most the drain timeout, and says whether anything was left unsent.
public final class BotRunner {
    public struct Options: Sendable {
        public var join: [String] = []
        public var json = false
        public var drainTimeout = 10.0
        public var input: Int32 = STDIN_FILENO
        /// Seconds without input before the bot says it is away; `nil` never.
        public var autoAway: TimeInterval?
        /// `--notify-command`: run for a mention of the bot's handle or a direct message to it.
        public var notifyCommand: String?
        public init() {}
    }

    /// How the bot ended.
    public enum Outcome: Equatable, Sendable {
        /// Input ended and everything was sent.
        case finished
        /// Input ended, or `/quit`, with messages still in the outbox.
        case unsent(Int)
        case quit
    }

    let session: ChatSession
    let options: Options
    var output: EventFormatter
    /// The channels this bot joined in this run; it prints messages from these only, so that
    /// two bots of one user piped together do not echo each other's channels forever.
    private var joined = Set<ChannelID>()
    /// What counts as a mention of this bot's user: the handle and the highlight words.
    private var mentions: MentionMatcher
    /// The presence last printed per account, so that a heartbeat that changes nothing prints nothing.
    private var presenceShown: [UserID: PresenceBeacon.Write] = [:]
    /// The members of the channels this bot joined in this run: whose presence it prints.
    private var neighbours = Set<UserID>() {
        didSet { for user in neighbours.subtracting(oldValue) { if let known = latestPresence[user] { showPresence(known) } } }
    }
    /// Everyone's newest presence, so that one who joins after their presence arrived is shown at once.
    private var latestPresence: [UserID: Presence] = [:]
    private let hook: NotifyHook?

    public init(client: ChatClient, options: Options) {
        self.session = ChatSession(client: client)
        self.options = options
        self.output = EventFormatter(json: options.json, color: !options.json && EventFormatter.wantsColor(fd: STDOUT_FILENO))
        self.mentions = client.mentionMatcher()
        self.hook = options.notifyCommand.map { NotifyHook(program: $0) }
    }

    /// Runs until end of input or `/quit`.
    public func run() throws -> Outcome {
        let client = session.client
        // One pass here fixes where the feed starts before the bot says it is ready, so that
        // a line posted right after a join is never missed by a bot with no saved position.
        // A locked file is left to the loop, which waits for it; this pass gives up at once.
        ChatClient.withoutWaitingForLocks { _ = try? client.engine.fetchOnce() }
        client.start()
        defer { client.stop() }
        session.startPresence(autoAwayAfter: options.autoAway)
        defer { session.stopPresence() }
        for channel in options.join {
            handle(.join(channel: channel))
        }

        let loop = try EventLoop()
        var reader = InputReader(descriptor: options.input)
        var quitting = false
        // Heartbeats, going idle and reaping hooks: a few seconds' precision is plenty while a hook runs;
        // otherwise a tick comes when the heartbeat or going idle is due.
        let pace = TickPace(busy: .seconds(5))
        /// A hook that runs wants ticks every few seconds, until it is reaped.
        func setPace() {
            pace.quiet = session.helpers.running == 0 && (hook?.processes.running ?? 0) == 0
            pace.due = session.beacon?.nextDue
        }
        setPace()
        let ticker = Ticker(loop: loop, pace: pace) { [self] in
            session.tickPresence()
            hook?.processes.reap()
            setPace()
        }
        /// After each event, which may have started a hook.
        func repace() {
            setPace()
            ticker.retime()
        }
        loop.watch(client.eventDescriptor) { [self] _ in
            drainEvents()
            repace()
        }
        // `unowned loop`: the loop keeps this handler, which must not keep the loop in turn.
        loop.watch(options.input) { [self, unowned loop] _ in
            defer { repace() }
            guard let pieces = reader.read() else { return }
            for piece in pieces {
                if process(piece) == .quit {
                    quitting = true
                    break
                }
            }
            if quitting || reader.ended { loop.stop() }
        }
        try loop.run()
        return finish(quitting: quitting)
    }

    /// Standard input cut into lines, a read at a time.
    private struct InputReader {
        let descriptor: Int32
        private var splitter = LineSplitter()
        private var buffer = [UInt8](repeating: 0, count: 65_536)
        /// End of input (or an error reading it) was reached.
        private(set) var ended = false

        init(descriptor: Int32) { self.descriptor = descriptor }

        /// The pieces one read completed; `nil` when the read should simply be tried again.
        mutating func read() -> [LineSplitter.Piece]? {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count < 0, errno == EINTR || errno == EAGAIN { return nil }
            if count > 0 { return splitter.feed(buffer[0..<count]) }
            ended = true
            return splitter.finish()
        }
    }

    private enum Step { case next, quit }

    private func process(_ piece: LineSplitter.Piece) -> Step {
        switch piece {
        case .tooLong(let length):
            report("A line of \(length) bytes was refused: lines are at most \(BotInput.maximumLineBytes) bytes. Use /attach for large text.")
            return .next
        case .line(let bytes):
            if bytes.isEmpty { return .next }
            session.noteActivity()
            do {
                let command = options.json ? try BotInput.json(bytes) : try BotInput.plain(bytes)
                if case .quit = command { return .quit }
                handle(command)
            } catch {
                report(error.message)
            }
            return .next
        }
    }

    private func handle(_ command: Command) {
        do {
            let result = try session.run(command)
            show(result)
            switch result {
            case .switched(let name, _):
                joined.insert(name.id)
                if let members = try? session.client.members(of: name) {
                    output.learn(members)
                    neighbours.formUnion(members.map(\.user))
                }
            case .left(let name, _): joined.remove(name.id)
            default: break
            }
        } catch let error as CommandError {
            report(error.message)
        } catch let error as StoreError {
            report(error.message)
        } catch {
            report("\(error)")
        }
    }

    private func finish(quitting: Bool) -> Outcome {
        let engine = session.client.engine
        if engine.waitUntilSent(timeout: options.drainTimeout) {
            drainEvents()
            return quitting ? .quit : .finished
        }
        drainEvents()
        let left = (try? engine.outboxEntries().filter { $0.state == .pending }.count) ?? 0
        report("\(left) message(s) could not be sent within \(options.drainTimeout) s; they stay queued and go out the next time Fatchat runs as this user.")
        return .unsent(left)
    }

    // MARK: Output

    private func drainEvents() {
        for chat in session.client.drainEvents() { show(chat) }
    }

    private func show(_ event: ChatEvent) {
        switch event {
        case .message(let message) where joined.contains(message.channel) && !session.client.queuedHere(message.id):
            output.learn(message)
            say(output.message(message, mention: message.sender != session.client.user && mentions.matches(message.text)))
        case .reactionsChanged(let id):
            guard let message = try? session.client.message(id), joined.contains(message.channel),
                  let counts = try? session.client.reactions(to: [id]) else { return }
            say(output.reactions(counts[id] ?? [], on: message))
        case .messageEdited(let message) where joined.contains(message.channel):
            output.learn(message)
            say(output.message(message, type: "edited"))
        case .messageDeleted(let id):
            if options.json { say(output.event("message_deleted", ["id": id.rawValue])) }
        case .channelDeleted(let name, let id):
            if joined.remove(id) != nil || options.json {
                say(output.event("channel_deleted", ["channel": name, "text": "#\(name) was deleted"]))
            }
        case .notification(let notification):
            if mentions.matches(notification.text) {
                hook?.run(sender: output.label(handle: notification.handle, user: notification.user),
                          channel: "#" + (notification.channel ?? ""), text: notification.text)
            }
            // Plain output already has the message when this run joined its channel; JSON gives every notification.
            let shown = notification.channel.flatMap { try? ChannelName($0).id }.map(joined.contains) ?? false
            output.learn(notification)
            if options.json || !shown { say(output.notification(notification)) }
        case .directMessage(let message) where !session.client.queuedHere(message.id):
            say(output.directMessage(message))
            if message.from != session.client.user {
                hook?.run(sender: output.label(handle: message.handle, user: message.from.rawValue), channel: "dm", text: message.text)
            }
        case .membersChanged(let channel) where joined.contains(channel):
            // A channel's record name is `channel.` and its case-folded name, which finds it as well as the name does.
            if let name = try? ChannelName(String(channel.rawValue.dropFirst("channel.".count))),
               let members = try? session.client.members(of: name) {
                neighbours.formUnion(members.map(\.user))
            }
        case .presence(let presence) where presence.user != session.client.user:
            latestPresence[presence.user] = presence
            showPresence(presence)
        case .typing(let notice) where joined.contains(notice.channel) && notice.user != session.client.user && notice.isCurrent(at: Date()):
            // Ephemeral and frequent: JSON only, for bots that want it; a plain pipeline would only be cluttered.
            if options.json { say(output.typing(notice)) }
        case .sendFailed(let id, let reason):
            report("Could not send \(id.rawValue): \(reason) It stays in the outbox, with its text, until it is retried or discarded.")
        default:
            break
        }
    }

    /// Prints someone's presence if they share a joined channel and it says something new.
    private func showPresence(_ presence: Presence) {
        guard neighbours.contains(presence.user) else { return }
        let now = Date()
        let state = presence.state(at: now)
        let shown = PresenceBeacon.Write(state: state, reason: state == .away ? presence.reason : "")
        guard presenceShown.updateValue(shown, forKey: presence.user) != shown else { return }
        say(output.presence(presence, at: now))
    }

    private func show(_ result: CommandResult) {
        switch result {
        case .done, .queued, .quit:
            break
        case .info(let text), .outboxChanged(let text):
            say(output.event("info", ["text": text]))
        case .switched(let name, let created):
            say(output.event("joined", ["channel": name.display, "created": created, "text": "Now talking in #\(name.display)"]))
        case .left(let name, let next):
            say(output.event("left", ["channel": name.display, "text": "Left #\(name.display)" + (next.map { "; now in #\($0.display)" } ?? "")]))
        case .channels(let channels):
            if options.json {
                say(output.event("channels", ["channels": channels.map { ["name": $0.name.display, "topic": $0.topic] }]))
            } else {
                channels.forEach { say(output.plain("#\($0.name.display)" + ($0.topic.isEmpty ? "" : "  \($0.topic)"))) }
            }
        case .members(let name, let members):
            output.learn(members)
            if options.json {
                say(output.event("members", ["channel": name.display, "members": members.map(output.memberObject)]))
            } else {
                say(output.members(members, of: name.display))
            }
        case .topic(let name, let topic):
            say(output.event("topic", ["channel": name.display, "topic": topic, "text": "#\(name.display): \(topic)"]))
        case .directMessageQueued:
            break
        case .conversation(let peer, let messages):
            if messages.isEmpty { say(output.event("info", ["text": "No direct messages with \(peer.rawValue) yet."])) }
            messages.forEach { say(output.directMessage($0)) }
        case .reactions(let message, let counts):
            say(output.reactions(counts, on: message))
        case .highlights(let words, let note):
            mentions = session.client.mentionMatcher()
            say(output.event("highlights", ["words": words, "text": note]))
        case .searchResults(_, let messages):
            if messages.isEmpty { say(output.event("search_result", ["text": "No message matches."])) }
            messages.forEach { say((options.json ? "" : "search: ") + output.message($0, type: "search_result")) }
        case .help(let text):
            if options.json {
                say(output.event("help", ["text": text]))
            } else {
                text.split(separator: "\n", omittingEmptySubsequences: false).forEach { say(output.plain(String($0))) }
            }
        }
    }

    private func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    private func report(_ message: String) {
        if options.json {
            say(output.error(message))
        } else {
            FileHandle.standardError.write(Data((output.error(message) + "\n").utf8))
        }
    }
}
