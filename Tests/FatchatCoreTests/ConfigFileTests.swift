import Foundation
import ProcessTestKit
import Testing

/// The configuration file: defaults that flags override, checked whole before anything starts,
/// with every refusal naming its line, and `fatchat config --print` saying where each setting came from.
@Suite(.startsProcesses)
struct ConfigFileTests {
    /// A home of its own: `$XDG_CONFIG_HOME/fatchat/config.yaml` and a container beside it.
    final class Home {
        let root: URL
        var configDirectory: URL { root.appendingPathComponent("config/fatchat") }
        var configFile: URL { configDirectory.appendingPathComponent("config.yaml") }
        var container: String { root.appendingPathComponent("chat").path }

        init() throws {
            root = URL(fileURLWithPath: "/tmp/fatchat-config-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: configDirectory, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        func write(_ text: String, mode: Int = 0o600) throws {
            try Data(text.utf8).write(to: configFile)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: configFile.path)
        }

        /// Runs `fatchat` with this home's configuration directory and no container from the environment.
        func run(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) async throws -> (status: Int32, out: [String], err: String) {
            var env = ["XDG_CONFIG_HOME": root.appendingPathComponent("config").path, "FATCHAT_CONTAINER": ""]
            env.merge(environment) { $1 }
            let process = try WorkerProcess("fatchat", executable: "fatchat", arguments, environment: env,
                                            input: try input.map(WorkerProcess.input))
            let ended = try await process.finish(timeout: .seconds(60))
            return (ended.status, process.lines, process.errorText)
        }

        /// The `config --print` row for `name`, split into its value and its origin.
        func printed(_ name: String, _ arguments: [String] = [], environment: [String: String] = [:]) async throws -> (value: String, origin: String)? {
            let result = try await run(["config", "--print"] + arguments, environment: environment)
            #expect(result.status == 0, "\(result.err)")
            guard let row = result.out.first(where: { $0.hasPrefix(name + " ") }), let hash = row.range(of: "  # ") else { return nil }
            return (row[..<hash.lowerBound].dropFirst(name.count).trimmingCharacters(in: .whitespaces), String(row[hash.upperBound...]))
        }
    }

    @Test("config --print says, for each setting, whether a flag, the environment, the file (and its line) or the default gave it")
    func printSaysWhereEachSettingCameFrom() async throws {
        let home = try Home()
        try home.write("""
            # my settings
            handle: ada
            container: \(home.container)
            highlight: [deploy, Outage]
            auto-away: 25
            colors:
              mention: bold yellow on 236
            keys:
              next-channel: [alt-n, f5]
            """)
        let file = home.configFile.path
        #expect(try await home.printed("handle")! == ("ada", "\(file), line 2"))
        #expect(try await home.printed("container")! == (home.container, "\(file), line 3"))
        #expect(try await home.printed("highlight")! == ("deploy outage", "\(file), line 4"))
        #expect(try await home.printed("auto-away")! == ("25 minutes", "\(file), line 5"))
        #expect(try await home.printed("colors.mention")! == ("bold yellow on 236", "\(file), line 7"))
        #expect(try await home.printed("keys.next-channel")! == ("alt-n, f5", "\(file), line 9"))
        #expect(try await home.printed("bell")! == ("false", "default"))
        #expect(try await home.printed("keys.previous-channel")! == ("ctrl-p", "default"))
        // A flag wins over the file; the environment wins over the file but not over a flag.
        #expect(try await home.printed("handle", ["--handle", "bob"])! == ("bob", "command line (--handle)"))
        #expect(try await home.printed("bell", ["--bell"])! == ("true", "command line (--bell)"))
        #expect(try await home.printed("auto-away", ["--auto-away", "0"])! == ("0 (never)", "command line (--auto-away)"))
        #expect(try await home.printed("container", environment: ["FATCHAT_CONTAINER": "/srv/elsewhere"])! == ("/srv/elsewhere", "$FATCHAT_CONTAINER"))
        #expect(try await home.printed("container", ["--container", "/srv/mine"], environment: ["FATCHAT_CONTAINER": "/srv/elsewhere"])!
                == ("/srv/mine", "command line (--container)"))
    }

    @Test("Commands take the handle, the container and the highlight words from the file; flags override them")
    func commandsUseTheFile() async throws {
        let home = try Home()
        try home.write("handle: cfgada\ncontainer: \(home.container)\nhighlight: deploy\n")
        #expect(try await home.run(["init", home.container]).status == 0)
        // No --container and no --handle: both come from the file.
        let posted = try await home.run(["post", "general", "from", "the", "file"])
        #expect(posted.status == 0, "\(posted.err)")
        let flagged = try await home.run(["post", "--handle", "cfgbob", "general", "from", "a", "flag"])
        #expect(flagged.status == 0, "\(flagged.err)")
        let read = try await home.run(["read", "general", "--json"])
        #expect(read.status == 0, "\(read.err)")
        let messages = read.out.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["type"] as? String == "message" }
        #expect(messages.map { $0["from"] as? String } == ["cfgada", "cfgbob"], "\(read.out)")
        // The file's highlight words count as mine, and /highlight cannot drop them: they live in the file.
        let bot = try await home.run(["bot", "--json"], input: """
            {"cmd":"highlight","action":"list"}
            {"cmd":"highlight","action":"del","word":"deploy"}

            """)
        let said = bot.out.joined(separator: "\n") + bot.err
        #expect(said.contains("Highlight words: deploy"), "\(said) \(bot.err)")
        #expect(said.contains("comes from your configuration file"), "\(said) \(bot.err)")
    }

    /// A file with a problem on `line`, and a fragment of the message that must say what it is.
    static let brokenFiles: [(text: String, line: Int, says: String)] = [
        ("handle: ada\nhandel: bob\n", 2, "unknown setting 'handel'"),
        ("bell: true\nmouse: sometimes\n", 2, "expected true or false"),
        ("auto-away: -3\n", 1, "auto-away takes minutes"),
        ("colors:\n  mention: bold\n  titlebar: reverse\n", 3, "unknown colour 'titlebar'"),
        ("colors:\n  mention: bold yelow\n", 2, "'yelow' is not a colour"),
        ("keys:\n  quit: ctrl-m\n", 2, "cannot be bound"),
        ("keys:\n  next-channel: alt-n\n  previous-channel: alt-n\n", 3, "already bound to next-channel"),
        ("keys:\n  next-channel: alt-3\n", 2, "Alt-1…Alt-9 choose channels"),
        ("handle: has space\n", 1, "not a valid handle"),
        ("highlight: [ok, 'no spaces']\n", 1, "cannot be a highlight word"),
        ("container: relative/dir\n", 1, "full path"),
        ("handle: ada\nbell: true\nhandle: bob\n", 3, "'handle' is given twice"),
        ("handle: [ada\n", 2, "not valid YAML"),
        ("- handle\n", 1, "must be a mapping"),
    ]

    @Test("A bad file stops every command before it starts, naming the file and the line", arguments: brokenFiles.indices)
    func aBadFileStopsTheCommandNamingItsLine(_ index: Int) async throws {
        let (text, line, says) = Self.brokenFiles[index]
        let home = try Home()
        try home.write("container: \(home.container)\n")
        #expect(try await home.run(["init", home.container]).status == 0)
        try home.write(text)
        let posted = try await home.run(["post", "--container", home.container, "general", "not", "sent"])
        #expect(posted.status == 1)
        #expect(posted.err.contains("\(home.configFile.path), line \(line): "), "\(posted.err)")
        #expect(posted.err.contains(says), "\(posted.err)")
        let printed = try await home.run(["config", "--print"])
        #expect(printed.status == 1 && printed.out.isEmpty, "config --print shows no half-read settings: \(printed.out)")
        // Nothing was queued or sent: with the file mended, the channel has no such message.
        try home.write("container: \(home.container)\n")
        let read = try await home.run(["read", "general"])
        #expect(!read.out.joined().contains("not sent"), "\(read.out)")
    }

    @Test("A file that someone else could change is refused, since it names a program to run")
    func aFileOthersCanChangeIsRefused() async throws {
        let home = try Home()
        try home.write("handle: ada\n", mode: 0o664)
        let groupWritable = try await home.run(["config"])
        #expect(groupWritable.status == 1)
        #expect(groupWritable.err.contains("others can write to it"), "\(groupWritable.err)")
        try home.write("handle: ada\n")
        #expect(chown(home.configFile.path, 54_321, 54_321) == 0)
        let foreign = try await home.run(["config"])
        #expect(foreign.status == 1)
        #expect(foreign.err.contains("belongs to another user"), "\(foreign.err)")
    }

    @Test("No file is no error, but a file named with --config must be there")
    func aMissingFile() async throws {
        let home = try Home()
        let none = try await home.run(["config"])
        #expect(none.status == 0, "\(none.err)")
        #expect(none.out.first?.contains("not there") == true, "\(none.out)")
        let named = try await home.run(["config", "--config", home.root.appendingPathComponent("nope.yaml").path])
        #expect(named.status == 1)
        #expect(named.err.contains("there is no such file"), "\(named.err)")
        let path = try await home.run(["config", "--path"])
        #expect(path.out == [home.configFile.path])
    }
}
