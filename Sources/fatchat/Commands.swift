import ArgumentParser
import FatchatCore
import Foundation
import RecordStore
import TerminalUI

struct Chat: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open the full-screen client (the default).",
        discussion: "F1 or /help inside the client lists the keys and commands.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var screen: ScreenOptions
    @OptionGroup var presence: PresenceOptions

    func execute() throws {
        let settings = try Settings.resolve(global: global, screen: screen, presence: presence)
        var options = ChatScreen.Options()
        options.bellOnMention = settings.bell.value
        options.desktopNotifications = settings.desktopNotifications.value
        options.autoAwayAfter = settings.autoAway.value > 0 ? settings.autoAway.value * 60 : nil
        options.notifyCommand = settings.notifyCommand.value
        options.keys = settings.bindings
        options.theme = settings.theme
        do {
            try ClientApp.run(client: try global.openClient("tui", settings: settings), options: options, mouse: settings.mouse.value)
        } catch let error as TerminalError {
            throw CommandError(error.description)
        }
    }
}

/// The client's screen options, which the configuration file can also set.
struct ScreenOptions: ParsableArguments {
    @Flag(inversion: .prefixedNo, help: "Ring the terminal bell when someone mentions your handle or sends you a direct message.")
    var bell: Bool?
    @Flag(inversion: .prefixedNo,
          help: "Send a desktop-notification escape (OSC 777 and OSC 9) when someone mentions you or sends you a direct message.")
    var notify: Bool?
    @Flag(inversion: .prefixedNo, help: "Let the wheel scroll and a click choose a channel (--no-mouse leaves the mouse to the terminal).")
    var mouse: Bool?
}

struct Init: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a container that several OS users can share.",
        discussion: """
            With --group, the directory is setgid to that group, and only its members may read or write it \
            (2770; the database 0660, assets 0640), and so it stays for the files SQLite creates later. \
            Without --group the container is yours alone (0700). --public lets every local user read it. \
            init refuses a directory that already holds any part of a container, and changes nothing it did not make: \
            a directory that exists must already have the group and mode asked for.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The directory to make the container in.") var directory: String
    @Option(help: "The group whose members may use the container.") var group: String?
    @Flag(name: .customLong("public"), help: "Let every local user read the container (2775, files 0664, assets 0644).") var readableByOthers = false
    @Option(help: "sqlite: one shared SQLite file. log: one append-only log per client, replayed into a cache of each user's own (for network filesystems; it works on a local disk too). Default: log on a network filesystem, sqlite on a local one; sqlite on a network filesystem is refused unless --fs-mode local.")
    var engine: StorageEngine?
    @Option(name: .customLong("postgres"), help: ArgumentHelp("Keep the public database on this PostgreSQL server (postgresql://HOST/DATABASE, or postgresql:///DATABASE?host=/run/postgresql for its socket). No password in the URL: use peer authentication, PGPASSFILE or PGPASSWORD. The schema is made there as your role.", valueName: "URL"))
    var postgres: String?

    func execute() throws {
        let url = URL(fileURLWithPath: directory)
        let container = try SharedContainer.make(at: url, group: group, readableByOthers: readableByOthers,
                                                 mode: global.fsMode.flatMap(JournalMode.init(rawValue:)), engine: engine, postgresURL: postgres)
        let sharing = group.map { ", shared with group \($0)" } ?? ""
        let kind = switch container.engine {
        case .log: "log engine"
        case .postgresql: "postgresql engine"
        case .sqlite: "\(container.mode.rawValue) mode"
        }
        print("Created \(container.url.path) (\(kind)\(sharing)\(readableByOthers ? ", readable by everyone" : "")).")
    }
}

struct Post: ReportingCommand {
    static let configuration = CommandConfiguration(abstract: "Post a message to a channel, creating the channel if needed.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The channel.", completion: .custom(ChannelCompletion.names)) var channel: String
    @Argument(parsing: .captureForPassthrough, help: "The text; several words are joined with spaces.") var text: [String]
    @Option(help: "Seconds to wait for the message to be sent; then it exits 3 if it is still queued (it goes out next time).") var timeout = 10.0

    func execute() throws {
        let deadline = Date().addingTimeInterval(max(0, timeout))
        let client = try global.openClient("post")
        let name = try ChannelName(channel)
        let words = text.first == "--" ? Array(text.dropFirst()) : text
        guard !words.isEmpty else { throw ValidationError("Give the text to post after the channel.") }
        // Queued before anything touches the shared file, so that no lock on it can lose the line.
        let message = try client.postBeforeJoining(words.joined(separator: " "), to: name, joinWithin: deadline.timeIntervalSinceNow)
        client.start()
        _ = client.waitUntilSent(timeout: max(0, deadline.timeIntervalSinceNow))
        let lockedSince = client.waitingSince
        let blocking = client.blockingFailure
        let offline = client.offlineReason
        // A write that a lock holds up is left to the exit; the verdict is read after the loops stopped, or gave up on them.
        client.stop(waitingAtMost: 0.5)
        switch try client.deliveryState(of: message.id) {
        case .sent:
            return
        case .failed(let reason):
            throw CommandError("Not sent: \(reason)")
        case .pending:
            if let blocking {
                Output.error("not sent: \(blocking) It stays queued and goes out once that is mended.")
                throw ExitCode(3)
            }
            let why = lockedSince.map { " (another process has held the database locked for \(Int(Date().timeIntervalSince($0))) s)" }
                ?? offline.map { " (\($0))" } ?? ""
            Output.error("not sent within \(timeout.formatted()) s\(why); it stays queued and goes out the next time fatchat runs as you.")
            throw ExitCode(3)
        }
    }
}

struct Read: ReportingCommand {
    static let configuration = CommandConfiguration(abstract: "Print a channel's latest messages, and with --follow, new ones as they come.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The channel.", completion: .custom(ChannelCompletion.names)) var channel: String
    @Option(help: "How many of the latest messages to print; any number, so a large one exports the whole channel.") var last = 20
    @Flag(help: "Keep printing new messages until interrupted.") var follow = false
    @Flag(help: "One JSON object per line, as the bot prints.") var json = false

    func execute() throws {
        let client = try global.openClient("read", resume: false)
        let name = try ChannelName(channel)
        guard try client.channel(name) != nil else { throw CommandError("There is no channel #\(name.display).") }
        var formatter = EventFormatter(json: json, color: !json && EventFormatter.wantsColor(fd: STDOUT_FILENO))
        // Every member of the channel is known before the first line, so a handle that copies
        // one of them shows its account wherever it appears; a sender met later is learnt as it comes.
        formatter.learn(try client.members(of: name))
        try client.eachMessage(in: name, last: max(1, last)) { message in
            formatter.learn(message)
            say(formatter.message(message))
        }
        guard follow else { return }
        try Follower(client: client, channel: name, formatter: formatter).run()
    }
}

struct Channels: ReportingCommand {
    static let configuration = CommandConfiguration(abstract: "List the channels, oldest first.")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "One JSON object per line.") var json = false

    func execute() throws {
        let client = try global.openClient("channels")
        let formatter = EventFormatter(json: json)
        for channel in try client.channels() {
            if json {
                print(formatter.event("channel", ["channel": channel.name.display, "topic": channel.topic, "creator": channel.creator?.rawValue ?? ""]))
            } else {
                print("#\(channel.name.display)" + (channel.topic.isEmpty ? "" : "  \(Sanitizer.inert(channel.topic))"))
            }
        }
    }
}

struct Who: ReportingCommand {
    static let configuration = CommandConfiguration(abstract: "List a channel's members.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The channel.", completion: .custom(ChannelCompletion.names)) var channel: String
    @Flag(help: "One JSON object per line.") var json = false

    func execute() throws {
        let client = try global.openClient("who")
        var formatter = EventFormatter(json: json)
        let members = try client.members(of: try ChannelName(channel))
        // Every member is known first, so a handle that copies another member's shows its account.
        formatter.learn(members)
        let presence = (try? client.presence(of: members.map(\.user))) ?? [:]
        let now = Date()
        for var member in members {
            member.presence = presence[member.user]
            print(json ? formatter.event("member", formatter.memberObject(member))
                       : formatter.label(handle: member.handle, user: member.user.rawValue)
                         + Sanitizer.inert(member.presence.map { " [\($0.describe(at: now))]" } ?? ""))
        }
    }
}

struct Bot: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run headless: commands and messages from stdin, events to stdout.",
        discussion: """
            Each input line is a /command, or a message to the current channel (the last one joined). \
            With --json each line is an object instead, e.g. {"cmd":"post","channel":"general","text":"hi"}. \
            At end of input the bot waits for its outbox to empty (at most --drain-timeout seconds), then \
            exits 0, or 3 if messages are left unsent; they stay queued for next time.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "Join this channel at start (repeatable).", completion: .custom(ChannelCompletion.names)) var join: [String] = []
    @Flag(help: "JSON lines in and out.") var json = false
    @Option(help: "Seconds to wait for the outbox to empty at end of input.") var drainTimeout = 10.0
    @OptionGroup var presence: PresenceOptions

    func execute() throws {
        let settings = try Settings.resolve(global: global, presence: presence)
        var options = BotRunner.Options()
        options.autoAway = presence.autoAwaySeconds(default: 0)
        options.notifyCommand = settings.notifyCommand.value
        options.join = join
        options.json = json
        options.drainTimeout = drainTimeout
        let outcome = try BotRunner(client: try global.openClient("bot", settings: settings), options: options).run()
        if case .unsent = outcome { throw ExitCode(3) }
    }
}

struct Profile: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set your public profile, and whether others may find you by handle or e-mail.",
        discussion: "Nobody can look you up unless you pass --discoverable. Empty values clear a field.")
    @OptionGroup var global: GlobalOptions
    @Option var firstName: String?
    @Option var lastName: String?
    @Option var email: String?
    @Flag(inversion: .prefixedNo, help: "Let others find you with `fatchat whois`.") var discoverable: Bool?

    func execute() throws {
        let client = try global.openClient("profile")
        try client.setProfile(firstName: firstName, lastName: lastName, email: email, discoverable: discoverable)
        client.start()
        defer { client.stop() }
        guard client.waitUntilSent(timeout: 10) else { throw ExitCode(3) }
    }
}

struct Whois: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find people by handle or e-mail (those who opted in to discovery), or by account name; each with their key's fingerprint.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "A handle, an e-mail address, or an account's user name.") var who: String
    @Flag(help: "One JSON object per line.") var json = false

    func execute() throws {
        let client = try global.openClient("whois")
        let found = try client.lookUp(who)
        let listed = Set(found.map(\.user))
        // Anyone who published a key under that user name can be found by it, discoverable or not: the key is public anyway.
        let accounts = client.accounts(named: who).filter { !listed.contains($0) }
        if found.isEmpty, accounts.isEmpty {
            FileHandle.standardError.write(Data("fatchat: nobody discoverable and no account's key matches \(Sanitizer.inert(who)).\n".utf8))
            throw ExitCode.failure
        }
        var formatter = EventFormatter(json: json)
        for person in found { formatter.accounts.learn(user: person.user.rawValue, handle: person.handle) }
        for person in found {
            let name = [person.firstName, person.lastName].compactMap { $0 }.joined(separator: " ")
            let label = formatter.label(handle: person.handle, user: person.user.rawValue)
            let fingerprint = client.fingerprint(of: person.user)
            print(json ? formatter.event("user", ["handle": person.handle, "user": person.user.rawValue, "name": name, "key": fingerprint ?? ""])
                       : label + Sanitizer.inert("\(name.isEmpty ? "" : " (\(name))") \(person.user.rawValue) key \(fingerprint ?? "none published")"))
        }
        for account in accounts {
            let fingerprint = client.fingerprint(of: account)
            print(json ? formatter.event("user", ["user": account.rawValue, "key": fingerprint ?? ""])
                       : Sanitizer.inert("\(account.rawValue) key \(fingerprint ?? "none that can be believed (not owned by its account, or malformed)")"))
        }
    }
}

extension StorageEngine: ExpressibleByArgument {}

/// The presence and notification options the client and the bot share.
struct PresenceOptions: ParsableArguments {
    @Option(name: .customLong("auto-away"),
            help: "Show as away after this many minutes without a key (client) or an input line (bot); 0 never. Default: the configuration file's auto-away, else 10, for the client; 0 for the bot.")
    var autoAway: Double?
    @Option(help: ArgumentHelp("Run this program (no shell) for a mention of you or a direct message to you, with three arguments: the sender, the channel (#name, or dm) and the text.", valueName: "CMD"))
    var notifyCommand: String?

    /// `--auto-away` in seconds; `nil` for never.
    func autoAwaySeconds(default minutes: Double) -> TimeInterval? {
        let chosen = autoAway ?? minutes
        return chosen.isFinite && chosen > 0 ? chosen * 60 : nil
    }

    func validate() throws {
        if let autoAway, !(autoAway.isFinite && autoAway >= 0) { throw ValidationError("--auto-away takes minutes: 0 or more.") }
        if let notifyCommand, notifyCommand.isEmpty { throw ValidationError("--notify-command needs a program.") }
    }
}
