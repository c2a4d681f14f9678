import Testing
@testable import FatchatCore

@Suite struct CommandGrammarTests {
    @Test(arguments: [
        ("hello world", Command.post(channel: nil, text: "hello world")),
        ("//etc/passwd is a path", .post(channel: nil, text: "/etc/passwd is a path")),
        ("/join general", .join(channel: "general")),
        ("/JOIN #General", .join(channel: "#General")),
        ("/leave", .leave(channel: nil)),
        ("/leave random", .leave(channel: "random")),
        ("/create ops  Where the pager goes ", .create(channel: "ops", topic: "Where the pager goes")),
        ("/create ops", .create(channel: "ops", topic: nil)),
        ("/delete ops", .delete(channel: "ops")),
        ("/topic", .topic(channel: nil, text: nil)),
        ("/topic Release on Friday", .topic(channel: nil, text: "Release on Friday")),
        ("/nick ada", .nick(handle: "ada")),
        ("/who", .who(channel: nil)),
        ("/who ops", .who(channel: "ops")),
        ("/channels", .channels),
        ("/attach /tmp/a file.txt", .attach(path: "/tmp/a file.txt", channel: nil)),
        ("/save 1a2b ~/Downloads/x.png", .save(message: "1a2b", path: "~/Downloads/x.png")),
        ("/edit last fixed   spacing kept", .edit(message: "last", text: "fixed   spacing kept")),
        ("/del 1a2b3c", .deleteMessage(message: "1a2b3c")),
        ("/search café menu", .search(text: "café menu")),
        ("/retry", .retry),
        ("/discard", .discard),
        ("/help", .help(topic: nil)),
        ("/help /join", .help(topic: "join")),
        ("/quit", .quit),
        ("/me waves", .action(channel: nil, text: "waves")),
        ("/reply 3f9a yes indeed", .reply(message: "3f9a", text: "yes indeed")),
        ("/react 3f9a 👍", .react(message: "3f9a", reaction: "👍")),
        ("/unreact last +1", .unreact(message: "last", reaction: "+1")),
        ("/reactions 3f9a", .reactions(message: "3f9a")),
        ("/highlight add deploy", .highlight(.add("deploy"))),
        ("/highlight del deploy", .highlight(.remove("deploy"))),
        ("/highlight", .highlight(.list)),
    ])
    func parses(line: String, expected: Command) throws {
        #expect(try CommandGrammar.parse(line) == expected)
    }

    @Test(arguments: [
        ("/join", "usage: /join CHANNEL"),
        ("/join a b", "usage: /join CHANNEL"),
        ("/edit last", "usage: /edit MESSAGE TEXT"),
        ("/save onlyone", "usage: /save MESSAGE PATH"),
        ("/channels extra", "usage: /channels"),
        ("/retry last", "usage: /retry"),
        ("/jion general", "Unknown command /jion"),
        ("/frobnicate", "Type /help for the list"),
        ("   ", "Nothing to send"),
    ])
    func refusesWithAOneLineHint(line: String, expected: String) {
        let error = #expect(throws: CommandError.self) { try CommandGrammar.parse(line) }
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("\n") == false)
    }

    @Test func completesCommandNames() {
        #expect(CommandGrammar.completions(of: "j") == ["join"])
        #expect(CommandGrammar.completions(of: "s") == ["save", "search"])
        #expect(CommandGrammar.completions(of: "zz").isEmpty)
    }

    @Test(arguments: ["general", "#Dev-Ops", "a", "release.2026", "x_y"])
    func acceptsChannelNames(raw: String) throws {
        let name = try ChannelName(raw)
        #expect(name.key == name.key.lowercased())
        #expect(!name.display.hasPrefix("#"))
    }

    @Test(arguments: ["", "#", "has space", "-leading", "é", String(repeating: "a", count: 33), "a/b", "\u{1B}[31m"])
    func refusesBadChannelNames(raw: String) {
        let error = #expect(throws: CommandError.self) { try ChannelName(raw) }
        #expect(error?.message.contains("letters, digits") == true)
    }

    @Test func namesAreUniqueIgnoringCase() throws {
        #expect(try ChannelName("General").recordID == ChannelName("#general").recordID)
        #expect(try ChannelName("General").display == "General")
    }

    @Test func helpListsEveryCommandAndTheKeys() throws {
        let help = try Help.text(for: nil)
        for entry in CommandGrammar.entries { #expect(help.contains(entry.usage)) }
        #expect(help.contains("Alt-1"))
        #expect(try Help.text(for: "edit").contains("MESSAGE is"))
        #expect(throws: CommandError.self) { try Help.text(for: "nope") }
    }
}
