import FatchatCore
import Foundation
import TerminalUI
import Yams

/// The configuration file, `$XDG_CONFIG_HOME/fatchat/config.yaml`: defaults that command-line flags override.
///
/// It is read whole and checked whole before anything starts: an unknown key, a value of the
/// wrong kind or a refused one stops the command with an error that names the file and the
/// line, so a client never runs with half a configuration. It names a program to run, so a
/// file that another user could change is refused, as ssh refuses such a config.
struct ConfigFile {
    /// One value and the line it was given on.
    struct Entry<Value> {
        var value: Value
        var line: Int
    }

    /// A configuration file that cannot be used, and where.
    struct Problem: Error, CustomStringConvertible {
        let path: String
        let line: Int?
        let message: String

        var description: String { "\(path)\(line.map { ", line \($0)" } ?? ""): \(message)" }
    }

    /// The largest file read; a configuration is a few lines.
    static let maximumSize = 64 * 1024

    /// The keys at the top level, and what each holds; `fatchat config --print` shows them in this order.
    static let settingNames = ["handle", "container", "notify-command", "highlight", "mouse", "bell", "desktop-notifications",
                       "auto-away", "colors", "keys"]

    let path: String
    var handle: Entry<String>?
    var container: Entry<String>?
    var notifyCommand: Entry<String>?
    var highlight: Entry<[String]>?
    var mouse: Entry<Bool>?
    var bell: Entry<Bool>?
    var desktopNotifications: Entry<Bool>?
    /// Minutes.
    var autoAway: Entry<Double>?
    /// Theme styles by name.
    var colors: [String: Entry<Style>] = [:]
    /// Client actions by name, and their keys.
    var keys: [String: Entry<[Key]>] = [:]

    /// Where the file is looked for when `--config` does not say: `$XDG_CONFIG_HOME/fatchat/config.yaml`, else `~/.config/…`.
    static func defaultPath(environment: [String: String]) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/fatchat/config.yaml" }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config/fatchat/config.yaml").path
    }

    /// Reads the file at `path`; nil when it does not exist and was not asked for by name.
    static func load(path: String, named: Bool) throws(Problem) -> ConfigFile? {
        let text: String
        do {
            guard let read = try readOwnFile(path) else {
                if named { throw Problem(path: path, line: nil, message: "there is no such file") }
                return nil
            }
            text = read
        } catch let problem as Problem {
            throw problem
        } catch {
            throw Problem(path: path, line: nil, message: "cannot be read: \(error.localizedDescription)")
        }
        return try ConfigFile(path: path, text: text)
    }

    /// The file's text, after checking that only its owner (this user, or root) can change it; nil if it does not exist.
    private static func readOwnFile(_ path: String) throws -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw Problem(path: path, line: nil, message: "cannot be opened: \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw Problem(path: path, line: nil, message: "is not a regular file")
        }
        guard info.st_uid == geteuid() || info.st_uid == 0 else {
            throw Problem(path: path, line: nil, message: "belongs to another user (uid \(info.st_uid)); it could make fatchat run their program")
        }
        guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            throw Problem(path: path, line: nil, message: "others can write to it, so it could make fatchat run their program; chmod go-w it")
        }
        guard info.st_size <= maximumSize, let data = try handle.read(upToCount: maximumSize + 1), data.count <= maximumSize else {
            throw Problem(path: path, line: nil, message: "is larger than \(maximumSize / 1024) KiB")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Problem(path: path, line: nil, message: "is not UTF-8 text")
        }
        return text
    }

    /// Parses and checks a configuration's text.
    init(path: String, text: String) throws(Problem) {
        self.path = path
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw Problem(path: path, line: Self.line(of: error, in: text), message: "is not valid YAML: \(Self.problem(of: error))")
        } catch {
            throw Problem(path: path, line: nil, message: "is not valid YAML: \(error)")
        }
        guard let root else { return }
        guard let mapping = root.mapping else { throw problem(at: root, "the file must be a mapping of settings, such as 'handle: ada'") }
        for (keyNode, value) in mapping {
            guard let key = keyNode.scalar?.string else { throw problem(at: keyNode, "a setting's name must be a plain word") }
            switch key {
            case "handle":
                handle = try entry(value) { text throws(InvalidSetting) in
                    do throws(CommandError) { try ChatClient.checkHandle(text) } catch { throw InvalidSetting(error.message) }
                    return text
                }
            case "container":
                container = try entry(value) { text throws(InvalidSetting) in
                    guard text.hasPrefix("/") || text.hasPrefix("~/") else {
                        throw InvalidSetting("the container is a full path, starting with / or ~/")
                    }
                    return text
                }
            case "notify-command":
                notifyCommand = try entry(value) { text throws(InvalidSetting) in
                    guard !text.isEmpty else { throw InvalidSetting("notify-command needs a program") }
                    return text
                }
            case "highlight":
                highlight = Entry(value: try words(value), line: Self.line(of: value))
            case "mouse": mouse = try flag(value)
            case "bell": bell = try flag(value)
            case "desktop-notifications": desktopNotifications = try flag(value)
            case "auto-away":
                guard let minutes = value.scalar.flatMap({ Double($0.string) }), minutes.isFinite, minutes >= 0 else {
                    throw problem(at: value, "auto-away takes minutes: 0 (never) or more")
                }
                autoAway = Entry(value: minutes, line: Self.line(of: value))
            case "colors":
                colors = try table(value, names: Theme.names.map(\.name), what: "colour") { text throws(InvalidSetting) in try Style(words: text) }
                    .compactMapValues { found in found.value.first.map { Entry(value: $0, line: found.line) } }
            case "keys":
                keys = try table(value, names: KeyBindings.names.map(\.name), what: "key binding", list: true) { text throws(InvalidSetting) in
                    try KeyBindings.key(named: text)
                }
            default:
                throw problem(at: keyNode, "unknown setting '\(key)'; the settings are \(Self.settingNames.joined(separator: ", "))")
            }
        }
        // Bindings are checked together, so that two actions claiming one key stop the file here too.
        _ = try bindings()
    }

    /// The key bindings the file gives; two actions may not claim one key.
    func bindings() throws(Problem) -> KeyBindings {
        var bindings = KeyBindings.defaults
        for (name, action) in KeyBindings.names {
            guard let entry = keys[name] else { continue }
            do {
                try bindings.bind(action, to: entry.value)
            } catch {
                throw Problem(path: path, line: entry.line, message: "\(name): \(error.description)")
            }
        }
        return bindings
    }

    // MARK: Reading values

    private func problem(at node: Node, _ message: String) -> Problem {
        Problem(path: path, line: Self.line(of: node), message: message)
    }

    private static func line(of node: Node) -> Int { node.mark?.line ?? 0 }

    private static func line(of error: YamlError, in text: String) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
            return mark.line
        case .duplicatedKeysInMapping(let duplicates, let context):
            // The parser marks the mapping; the line worth reading is the key's second appearance.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let given = lines.indices.filter { index in
                duplicates.contains { lines[index].drop(while: \.isWhitespace).hasPrefix($0 + ":") }
            }
            return given.count > 1 ? given[1] + 1 : context.mark.line
        default:
            return nil
        }
    }

    private static func problem(of error: YamlError) -> String {
        switch error {
        case .scanner(_, let problem, _, _), .parser(_, let problem, _, _), .composer(_, let problem, _, _): problem
        case .duplicatedKeysInMapping(let duplicates, _): "'\(duplicates.joined(separator: "', '"))' is given twice"
        default: "\(error)"
        }
    }

    /// A scalar read by `read`, with the scalar's line; a refusal names the line.
    private func entry<Value>(_ node: Node, _ read: (String) throws(InvalidSetting) -> Value) throws(Problem) -> Entry<Value> {
        guard let scalar = node.scalar else { throw problem(at: node, "expected a single value here, not a list or a mapping") }
        do {
            return Entry(value: try read(scalar.string), line: Self.line(of: node))
        } catch {
            throw problem(at: node, error.description)
        }
    }

    private func flag(_ node: Node) throws(Problem) -> Entry<Bool> {
        guard let value = node.scalar.flatMap({ Bool.construct(from: $0) }) else { throw problem(at: node, "expected true or false") }
        return Entry(value: value, line: Self.line(of: node))
    }

    /// Highlight words: a list, or one word.
    private func words(_ node: Node) throws(Problem) -> [String] {
        let items = node.sequence.map(Array.init) ?? [node]
        guard items.count <= ChatClient.maximumHighlights else {
            throw problem(at: node, "at most \(ChatClient.maximumHighlights) highlight words")
        }
        var words: [String] = []
        for item in items {
            words.append(try entry(item) { text throws(InvalidSetting) in
                do throws(CommandError) { try ChatClient.checkHighlight(text) } catch { throw InvalidSetting(error.message) }
                return text.lowercased()
            }.value)
        }
        return words
    }

    /// A mapping whose keys must be among `names`, each value read by `read` (a list of them if `list`).
    private func table<Value>(_ node: Node, names: [String], what: String, list: Bool = false,
                              _ read: (String) throws(InvalidSetting) -> Value) throws(Problem) -> [String: Entry<[Value]>] {
        guard let mapping = node.mapping else { throw problem(at: node, "expected a mapping, one \(what) per line") }
        var found: [String: Entry<[Value]>] = [:]
        for (keyNode, value) in mapping {
            guard let name = keyNode.scalar?.string, names.contains(name) else {
                throw problem(at: keyNode, "unknown \(what) '\(keyNode.scalar?.string ?? "?")'; they are \(names.joined(separator: ", "))")
            }
            let items = list ? (value.sequence.map(Array.init) ?? [value]) : [value]
            var values: [Value] = []
            for item in items { values.append(try entry(item, read).value) }
            found[name] = Entry(value: values, line: Self.line(of: value))
        }
        return found
    }
}
