@testable import FatchatCore
import Foundation
import ProcessTestKit
import Testing

/// What a terminal program is expected to have: a manual page that matches the program,
/// `--version`, shell completion that knows the container's channels, and an install.
@Suite(.startsProcesses)
struct UnixToolboxTests {
    static let root = CodeMapTests.root
    static var page: URL { root.appendingPathComponent("docs/fatchat.1") }

    /// Runs `command` with `sh -c`, and returns what it printed on stdout and stderr, then its exit status.
    static func shell(_ command: String, _ arguments: String...) throws -> (output: String, status: Int32) {
        try shell(command, arguments: arguments)
    }

    static func shell(_ command: String, arguments: [String]) throws -> (output: String, status: Int32) {
        let printed = try spawn(["/bin/sh", "-c", command + " 2>&1; echo \"exit=$?\"", "sh"] + arguments, capturing: true)
        var lines = printed.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last == "" { lines.removeLast() }
        let status = lines.popLast().flatMap { Int32($0.dropFirst("exit=".count)) } ?? -1
        return (lines.joined(separator: "\n"), status)
    }

    /// Every subcommand the user can see, and the long options of each, from the parser's own dump.
    static func commandLine() throws -> [(command: String, options: [String])] {
        let fatchat = try WorkerProcess.executable("fatchat").path
        let dump = try shell("\"$1\" --experimental-dump-help", fatchat)
        #expect(dump.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(dump.output.utf8)) as? [String: Any])
        var found: [(String, [String])] = []
        func walk(_ command: [String: Any]) {
            guard command["shouldDisplay"] as? Bool ?? true else { return }
            let options = (command["arguments"] as? [[String: Any]] ?? []).filter { $0["shouldDisplay"] as? Bool ?? true }
                .flatMap { ($0["names"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "long" }.compactMap { $0["name"] as? String } }
            found.append((command["commandName"] as? String ?? "", options))
            (command["subcommands"] as? [[String: Any]] ?? []).forEach(walk)
        }
        walk(try #require(json["command"] as? [String: Any]))
        return found
    }

    @Test("The manual page names every subcommand, every option and every chat command, and has the hand-written sections")
    func theManualPageIsComplete() throws {
        let text = try String(contentsOf: Self.page, encoding: .utf8)
        let commands = try Self.commandLine()
        #expect(commands.count > 10, "the dump listed \(commands.map(\.command))")
        for (command, options) in commands.dropFirst() {
            #expect(text.contains(".It Em \(command)\n"), "\(command) is not in docs/fatchat.1; run scripts/manual.sh")
            for option in options {
                #expect(text.contains("Fl -\(option)"), "--\(option) of \(command) is not in docs/fatchat.1; run scripts/manual.sh")
            }
        }
        #expect(!text.contains("manual-sections"), "the hidden subcommand leaked into the page")
        for entry in CommandGrammar.entries {
            #expect(text.contains(".It Li \(Manual.escaped(entry.usage))\n"), "/\(entry.name) is not in docs/fatchat.1; run scripts/manual.sh")
        }
        for section in ["CHAT COMMANDS", "KEYS", "BOT PROTOCOL", "ENVIRONMENT", "FILES", "EXIT STATUS"] {
            #expect(text.contains(".Sh \(section)\n"), "no \(section) section")
        }
        #expect(text.contains(Manual.escaped("Ctrl-N / Ctrl-P")), "the keys from help.txt are missing")
    }

    @Test("The manual page renders without a warning", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/groff")))
    func theManualPageRenders() throws {
        let render = try Self.shell("groff -mandoc -ww -z -Tutf8 \"$1\"", Self.page.path)
        #expect(render.status == 0)
        #expect(render.output.isEmpty, "groff: \(render.output)")
    }

    @Test func versionPrintsTheRelease() throws {
        let fatchat = try WorkerProcess.executable("fatchat").path
        let version = try Self.shell("\"$1\" --version", fatchat)
        #expect(version.status == 0)
        #expect(version.output == FatchatVersion.string)
    }

    /// What bash's completion offers for the words, with the generated script loaded.
    static func bashCompletions(script: String, words: [String], dataHome: String) throws -> [String] {
        let program = """
            source "$1"; shift
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
            _fatchat fatchat "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let fatchatDirectory = try WorkerProcess.executable("fatchat").deletingLastPathComponent().path
        let result = try shell("PATH=\"$1:$PATH\" XDG_DATA_HOME=\"$2\" bash -c \"$3\" bash \"$4\" " + words.indices.map { "\"${\($0 + 5)}\"" }.joined(separator: " "),
                               arguments: [fatchatDirectory, dataHome, program, script] + words)
        #expect(result.status == 0, "\(result.output)")
        return result.output.split(separator: "\n").map(String.init).filter { !$0.isEmpty }.sorted()
    }

    @Test("bash completes a CHANNEL argument with the channels of the container the line names, and offers nothing for a missing one")
    func bashCompletesChannels() throws {
        guard FileManager.default.isExecutableFile(atPath: "/bin/bash") else { return }
        let directory = try ChatSandbox()
        let dataHome = directory.root.appendingPathComponent("xdg").path
        let fatchat = try WorkerProcess.executable("fatchat").path
        let container = directory.root.appendingPathComponent("c").path
        let env = "XDG_DATA_HOME=\"$1\""
        #expect(try Self.shell("\(env) \"$2\" init \"$3\" >/dev/null", dataHome, fatchat, container).status == 0)
        for channel in ["general", "gossip", "ops"] {
            #expect(try Self.shell("\(env) \"$2\" post --container \"$3\" \"$4\" hello", dataHome, fatchat, container, channel).status == 0)
        }
        let script = directory.root.appendingPathComponent("fatchat.bash").path
        #expect(try Self.shell("\"$1\" --generate-completion-script bash > \"$2\"", fatchat, script).status == 0)

        #expect(try Self.bashCompletions(script: script, words: ["fatchat", "read", "--container", container, "go"], dataHome: dataHome) == ["gossip"])
        #expect(try Self.bashCompletions(script: script, words: ["fatchat", "who", "--container", container, ""], dataHome: dataHome) == ["general", "gossip", "ops"])
        #expect(try Self.bashCompletions(script: script, words: ["fatchat", "bot", "--container", container, "--join", "o"], dataHome: dataHome) == ["ops"])
        let missing = directory.root.appendingPathComponent("nowhere").path
        #expect(try Self.bashCompletions(script: script, words: ["fatchat", "read", "--container", missing, ""], dataHome: dataHome).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: missing), "completion made a container")

        for shell in ["zsh", "fish"] {
            let generated = try Self.shell("\"$1\" --generate-completion-script \"$2\"", fatchat, shell)
            #expect(generated.status == 0)
            #expect(generated.output.contains("---completion"), "the \(shell) script does not ask fatchat for channel names")
        }
    }

    @Test("scripts/install.sh puts a fatchat under the prefix that runs from there with its help, manual page and completions")
    func installRunsFromThePrefix() throws {
        let directory = try ChatSandbox()
        let prefix = directory.root.appendingPathComponent("prefix").path
        let products = try WorkerProcess.executable("fatchat").deletingLastPathComponent().path
        let install = try Self.shell("FATCHAT_INSTALL_FROM=\"$1\" bash \"$2\" \"$3\"", products, Self.root.appendingPathComponent("scripts/install.sh").path, prefix)
        #expect(install.status == 0, "\(install.output)")

        // Run from a directory with nothing of the build in it, with no hint of where the resources are.
        let installed = prefix + "/bin/fatchat"
        let help = try Self.shell("cd / && env -u FATCHAT_RESOURCES \"$1\" --help", installed)
        #expect(help.status == 0)
        #expect(help.output.contains("USAGE: fatchat"))
        let keys = try Self.shell("cd / && env -u FATCHAT_RESOURCES \"$1\" manual-sections", installed)
        #expect(keys.output.contains("Ctrl-N"), "the installed binary did not find its help text: \(keys.output.prefix(300))")

        let manual = try String(contentsOfFile: prefix + "/share/man/man1/fatchat.1", encoding: .utf8)
        #expect(manual == (try String(contentsOf: Self.page, encoding: .utf8)))
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/man") {
            let found = try Self.shell("man -M \"$1\" -w fatchat", prefix + "/share/man")
            #expect(found.output == prefix + "/share/man/man1/fatchat.1")
        }
        for file in ["bash-completion/completions/fatchat", "zsh/site-functions/_fatchat", "fish/vendor_completions.d/fatchat.fish"] {
            let text = (try? String(contentsOfFile: prefix + "/share/" + file, encoding: .utf8)) ?? ""
            #expect(text.contains("---completion"), "\(file) is missing or empty")
        }
    }
}
