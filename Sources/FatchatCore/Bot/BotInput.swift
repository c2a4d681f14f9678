import Foundation

/// Turns the bot's input lines into commands: plain lines, or JSON objects with `--json`.
public enum BotInput {
    /// The longest input line the bot accepts; longer ones are refused and skipped.
    public static let maximumLineBytes = 1_048_576

    /// Every JSON command's shape: its `cmd` and the fields it takes.
    static let shapes: [String: (required: [String], optional: [String])] = [
        "post": (["text"], ["channel"]),
        "join": (["channel"], []),
        "leave": ([], ["channel"]),
        "create": (["channel"], ["topic"]),
        "delete": (["channel"], []),
        "topic": ([], ["channel", "text"]),
        "nick": (["handle"], []),
        "who": ([], ["channel"]),
        "channels": ([], []),
        "attach": (["path"], ["channel"]),
        "save": (["id", "path"], []),
        "edit": (["id", "text"], []),
        "del": (["id"], []),
        "search": (["text"], []),
        "reply": (["id", "text"], []),
        "react": (["id", "emoji"], []),
        "unreact": (["id", "emoji"], []),
        "reactions": (["id"], []),
        "me": (["text"], ["channel"]),
        "highlight": (["action"], ["word"]),
        "msg": (["to", "text"], []),
        "query": (["with"], []),
        "retry": ([], []),
        "discard": ([], []),
        "help": ([], ["topic"]),
        "quit": ([], []),
        "away": ([], ["reason"]),
        "back": ([], []),
        "typing": ([], ["channel"]),
        "open": ([], ["n"]),
    ]

    /// One line of plain input: a slash command, or a message to the current channel.
    public static func plain(_ bytes: some Collection<UInt8>) throws(CommandError) -> Command {
        try CommandGrammar.parse(try text(of: bytes))
    }

    /// One line of `--json` input: `{"cmd":"post","channel":"general","text":"hi"}`.
    public static func json(_ bytes: some Collection<UInt8>) throws(CommandError) -> Command {
        let data = Data(bytes)
        _ = try text(of: bytes)
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw CommandError("Not valid JSON; send one object per line, like {\"cmd\":\"post\",\"channel\":\"general\",\"text\":\"hi\"}.")
        }
        guard let object = parsed as? [String: Any] else {
            throw CommandError("Each line must be a JSON object, like {\"cmd\":\"post\",\"channel\":\"general\",\"text\":\"hi\"}.")
        }
        guard let cmd = object["cmd"] as? String else {
            throw CommandError("The object has no \"cmd\" string; one of: \(shapes.keys.sorted().joined(separator: ", ")).")
        }
        guard let shape = shapes[cmd] else {
            throw CommandError("Unknown cmd \"\(cmd)\"; one of: \(shapes.keys.sorted().joined(separator: ", ")).")
        }
        let allowed = Set(["cmd"] + shape.required + shape.optional)
        if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw CommandError("\"\(cmd)\" takes \(describe(shape)); it has no field \"\(unknown)\".")
        }
        var fields: [String: String] = [:]
        for (key, value) in object where key != "cmd" {
            guard let string = value as? String else {
                throw CommandError("Field \"\(key)\" of \"\(cmd)\" must be a string.")
            }
            fields[key] = string
        }
        if let missing = shape.required.first(where: { fields[$0] == nil }) {
            throw CommandError("\"\(cmd)\" needs \"\(missing)\"; it takes \(describe(shape)).")
        }
        let f = { (key: String) in fields[key] ?? "" }
        switch cmd {
        case "post": return .post(channel: fields["channel"], text: f("text"))
        case "join": return .join(channel: f("channel"))
        case "leave": return .leave(channel: fields["channel"])
        case "create": return .create(channel: f("channel"), topic: fields["topic"])
        case "delete": return .delete(channel: f("channel"))
        case "topic": return .topic(channel: fields["channel"], text: fields["text"])
        case "nick": return .nick(handle: f("handle"))
        case "who": return .who(channel: fields["channel"])
        case "channels": return .channels
        case "attach": return .attach(path: f("path"), channel: fields["channel"])
        case "save": return .save(message: f("id"), path: f("path"))
        case "edit": return .edit(message: f("id"), text: f("text"))
        case "del": return .deleteMessage(message: f("id"))
        case "search": return .search(text: f("text"))
        case "reply": return .reply(message: f("id"), text: f("text"))
        case "react": return .react(message: f("id"), reaction: f("emoji"))
        case "unreact": return .unreact(message: f("id"), reaction: f("emoji"))
        case "reactions": return .reactions(message: f("id"))
        case "me": return .action(channel: fields["channel"], text: f("text"))
        case "highlight":
            switch (f("action"), fields["word"]) {
            case ("add", let word?): return .highlight(.add(word))
            case ("del", let word?): return .highlight(.remove(word))
            case ("list", nil): return .highlight(.list)
            default: throw CommandError("\"highlight\" takes \"action\": \"add\" or \"del\" with a \"word\", or \"list\" without one.")
            }
        case "msg": return .directMessage(to: f("to"), text: f("text"))
        case "query": return .query(with: f("with"))
        case "retry": return .retry
        case "discard": return .discard
        case "help": return .help(topic: fields["topic"])
        case "away": return .away(reason: fields["reason"].flatMap { $0.isEmpty ? nil : $0 })
        case "back": return .back
        case "typing": return .typing(channel: fields["channel"])
        case "open":
            guard let index = Int(fields["n"] ?? "1"), (1...1000).contains(index) else {
                throw CommandError("\"open\" takes optional \"n\", a number from 1 to 1000 as a string.")
            }
            return .open(index: index)
        default: return .quit
        }
    }

    private static func describe(_ shape: (required: [String], optional: [String])) -> String {
        let parts = shape.required.map { "\"\($0)\"" } + shape.optional.map { "optional \"\($0)\"" }
        return parts.isEmpty ? "no fields" : parts.joined(separator: ", ")
    }

    /// The line as text; invalid UTF-8 is refused rather than repaired, so nothing is silently altered.
    static func text(of bytes: some Collection<UInt8>) throws(CommandError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CommandError("The line is not valid UTF-8; it was not sent. Check the input's encoding.")
        }
        return text
    }
}
