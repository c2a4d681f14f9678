import Foundation

/// The slash-command grammar: `/join NAME`, `/edit MESSAGE TEXT…`, and a plain line as a post.
///
/// A line starting with `//` posts the rest with one `/`, as in IRC clients.
public enum CommandGrammar {
    /// One command's spelling, for parsing, errors, help and tab completion.
    public struct Entry: Sendable {
        public var name: String
        public var usage: String
        public var summary: String
    }

    /// Every command, in the order help lists them.
    public static let entries: [Entry] = [
        Entry(name: "join", usage: "/join CHANNEL", summary: "join a channel, creating it if it does not exist"),
        Entry(name: "leave", usage: "/leave [CHANNEL]", summary: "leave a channel (the current one by default)"),
        Entry(name: "create", usage: "/create CHANNEL [TOPIC…]", summary: "create a channel and join it"),
        Entry(name: "delete", usage: "/delete CHANNEL", summary: "delete a channel you created, with all its messages"),
        Entry(name: "topic", usage: "/topic [TEXT…]", summary: "show or set the current channel's topic"),
        Entry(name: "nick", usage: "/nick HANDLE", summary: "change the handle others see"),
        Entry(name: "who", usage: "/who [CHANNEL]", summary: "list a channel's members"),
        Entry(name: "channels", usage: "/channels", summary: "list all channels"),
        Entry(name: "attach", usage: "/attach PATH", summary: "post a file to the current channel"),
        Entry(name: "save", usage: "/save MESSAGE PATH", summary: "save a message's attachment to PATH"),
        Entry(name: "edit", usage: "/edit MESSAGE TEXT…", summary: "replace the text of a message you sent"),
        Entry(name: "del", usage: "/del MESSAGE", summary: "delete a message you sent"),
        Entry(name: "search", usage: "/search WORDS…", summary: "find messages containing these words"),
        Entry(name: "reply", usage: "/reply MESSAGE TEXT…", summary: "answer a message; it shows quoted above your reply"),
        Entry(name: "react", usage: "/react MESSAGE EMOJI", summary: "add your reaction to a message, one of each emoji"),
        Entry(name: "unreact", usage: "/unreact MESSAGE EMOJI", summary: "take your reaction off a message"),
        Entry(name: "reactions", usage: "/reactions MESSAGE", summary: "show who reacted to a message, and how"),
        Entry(name: "me", usage: "/me ACTION…", summary: "post an action, shown as * you ACTION"),
        Entry(name: "highlight", usage: "/highlight add|del|list [WORD]", summary: "words that alert you as your handle does"),
        Entry(name: "msg", usage: "/msg USER TEXT…", summary: "send a direct message only USER can read"),
        Entry(name: "query", usage: "/query USER", summary: "open your direct conversation with USER (@USER); the bot lists the newest 50"),
        Entry(name: "away", usage: "/away [REASON…]", summary: "say you are away; /away alone toggles back"),
        Entry(name: "back", usage: "/back", summary: "say you are back"),
        Entry(name: "open", usage: "/open [N]", summary: "open the Nth newest link of the channel in $BROWSER (1 by default)"),
        Entry(name: "typing", usage: "/typing", summary: "say you are typing in the current channel (for bots)"),
        Entry(name: "retry", usage: "/retry", summary: "send again what failed to send (marked failed)"),
        Entry(name: "discard", usage: "/discard", summary: "drop what failed to send"),
        Entry(name: "help", usage: "/help [COMMAND]", summary: "list commands and keys"),
        Entry(name: "quit", usage: "/quit", summary: "leave the program"),
    ]

    /// The commands whose MESSAGE help applies.
    public static let messageCommands: Set<String> = ["edit", "del", "save", "reply", "react", "unreact", "reactions"]

    /// What MESSAGE means in `/edit`, `/del`, `/save`, `/reply` and the reaction commands.
    public static let messageReferenceHelp = "MESSAGE is a message's short ID as shown (at least 4 characters of it), `last` for your latest message, or `^` (`^2`, `^3`, … up to `^50`) for the newest (second newest, …) message from someone else in the channel."

    /// Parses one input line. Text that does not start with `/` is a post to the current channel.
    public static func parse(_ line: String) throws(CommandError) -> Command {
        if line.hasPrefix("//") { return .post(channel: nil, text: String(line.dropFirst())) }
        guard line.hasPrefix("/") else {
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw CommandError("Nothing to send: type a message, or /help for commands.")
            }
            return .post(channel: nil, text: line)
        }
        let body = line.dropFirst()
        let name = body.prefix { !$0.isWhitespace }.lowercased()
        let rest = body.dropFirst(name.count).drop { $0.isWhitespace }
        let words = rest.split(whereSeparator: \.isWhitespace).map(String.init)
        let text = String(rest).trimmingTrailingWhitespace()

        func usage() -> CommandError {
            let entry = entries.first { $0.name == name }
            return CommandError("usage: \(entry?.usage ?? "/\(name)") (\(entry?.summary ?? ""))")
        }
        func exactly(_ count: Int) throws(CommandError) -> [String] {
            guard words.count == count else { throw usage() }
            return words
        }
        func atMost(_ count: Int) throws(CommandError) -> String? {
            guard words.count <= count else { throw usage() }
            return words.first
        }

        switch name {
        case "join", "j": return .join(channel: try exactly(1)[0])
        case "leave", "part": return .leave(channel: try atMost(1))
        case "create":
            guard let channel = words.first else { throw usage() }
            let topic = rest.dropFirst(channel.count).drop { $0.isWhitespace }
            return .create(channel: channel, topic: topic.isEmpty ? nil : String(topic).trimmingTrailingWhitespace())
        case "delete": return .delete(channel: try exactly(1)[0])
        case "topic": return .topic(channel: nil, text: text.isEmpty ? nil : text)
        case "nick": return .nick(handle: try exactly(1)[0])
        case "who", "names": return .who(channel: try atMost(1))
        case "channels", "list": _ = try exactly(0); return .channels
        case "attach":
            guard !text.isEmpty else { throw usage() }
            return .attach(path: text, channel: nil)
        case "save":
            guard words.count >= 2, let message = words.first else { throw usage() }
            return .save(message: message, path: String(rest.dropFirst(message.count).drop { $0.isWhitespace }).trimmingTrailingWhitespace())
        case "edit":
            guard words.count >= 2, let message = words.first else { throw usage() }
            return .edit(message: message, text: String(rest.dropFirst(message.count).drop { $0.isWhitespace }))
        case "del": return .deleteMessage(message: try exactly(1)[0])
        case "search":
            guard !text.isEmpty else { throw usage() }
            return .search(text: text)
        case "msg":
            guard words.count >= 2, let user = words.first else { throw usage() }
            return .directMessage(to: user, text: String(rest.dropFirst(user.count).drop { $0.isWhitespace }))
        case "query": return .query(with: try exactly(1)[0])
        case "away": return .away(reason: text.isEmpty ? nil : text)
        case "back": _ = try exactly(0); return .back
        case "typing": _ = try exactly(0); return .typing(channel: nil)
        case "open":
            guard let raw = try atMost(1) else { return .open(index: 1) }
            guard let index = Int(raw), (1...1000).contains(index) else { throw usage() }
            return .open(index: index)
        case "retry": _ = try exactly(0); return .retry
        case "discard": _ = try exactly(0); return .discard
        case "help", "?": return .help(topic: try atMost(1).map { $0.hasPrefix("/") ? String($0.dropFirst()) : $0 })
        case "quit", "exit", "q": _ = try exactly(0); return .quit
        case "me":
            guard !text.isEmpty else { throw usage() }
            return .action(channel: nil, text: text)
        case "reply", "re":
            guard words.count >= 2, let message = words.first else { throw usage() }
            return .reply(message: message, text: String(rest.dropFirst(message.count).drop { $0.isWhitespace }))
        case "react": let w = try exactly(2); return .react(message: w[0], reaction: w[1])
        case "unreact": let w = try exactly(2); return .unreact(message: w[0], reaction: w[1])
        case "reactions": return .reactions(message: try exactly(1)[0])
        case "highlight", "hl":
            switch words.first?.lowercased() {
            case "add": return .highlight(.add(try exactly(2)[1]))
            case "del", "rm", "remove": return .highlight(.remove(try exactly(2)[1]))
            case "list", nil: _ = try atMost(1); return .highlight(.list)
            default: throw usage()
            }
        default:
            let known = entries.map(\.name)
            let near = known.filter { $0.hasPrefix(String(name.prefix(2))) }
            let hint = near.isEmpty ? "" : " Did you mean /\(near.joined(separator: ", /"))?"
            throw CommandError("Unknown command /\(name).\(hint) Type /help for the list; start a line with // to post text beginning with /.")
        }
    }

    /// Command names that start with `prefix` (without the slash), for tab completion.
    public static func completions(of prefix: String) -> [String] {
        entries.map(\.name).filter { $0.hasPrefix(prefix.lowercased()) }
    }
}

extension String {
    func trimmingTrailingWhitespace() -> String {
        var copy = self
        while copy.last?.isWhitespace == true { copy.removeLast() }
        return copy
    }
}

extension Substring {
    func trimmingTrailingWhitespace() -> String { String(self).trimmingTrailingWhitespace() }
}
