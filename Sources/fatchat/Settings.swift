import FatchatCore
import Foundation
import RecordStore
import TerminalUI

/// Where a setting's value came from, as `fatchat config --print` says it.
enum SettingOrigin: Equatable, CustomStringConvertible {
    case builtIn
    case file(String, line: Int)
    case environment(String)
    case commandLine(String)

    var description: String {
        switch self {
        case .builtIn: "default"
        case .file(let path, let line): "\(path), line \(line)"
        case .environment(let name): "$\(name)"
        case .commandLine(let flag): "command line (\(flag))"
        }
    }
}

/// A setting's value and where it came from.
struct Setting<Value> {
    var value: Value
    var origin: SettingOrigin
}

/// The settings of one run: a command-line flag wins, then the environment, then the configuration file, then the default.
struct Settings {
    /// The configuration file looked for, and whether it was there.
    var configPath: String
    var configFound: Bool
    /// nil: the handle set with `/nick`, else the login name.
    var handle: Setting<String?>
    var container: Setting<URL>
    var notifyCommand: Setting<String?>
    var highlight: Setting<[String]>
    var mouse: Setting<Bool>
    var bell: Setting<Bool>
    var desktopNotifications: Setting<Bool>
    /// The client's auto-away, in minutes; 0 never.
    var autoAway: Setting<Double>
    var colors: [(name: String, setting: Setting<Style>)]
    var keys: [(name: String, setting: Setting<[Key]>)]
    var bindings: KeyBindings

    /// Whether the container was chosen by anything but the default, so that it is never made on first use.
    var containerIsNamed: Bool { container.origin != .builtIn }

    /// The styles, with the file's colours.
    var theme: Theme {
        var theme = Theme()
        for (name, path) in Theme.names {
            if let chosen = colors.first(where: { $0.name == name }) { theme[keyPath: path] = chosen.setting.value }
        }
        return theme
    }

    /// Reads the configuration file (`--config`, else the default path) and lays the flags over it.
    static func resolve(global: GlobalOptions, screen: ScreenOptions? = nil, presence: PresenceOptions? = nil,
                        environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Settings {
        let path = global.config ?? ConfigFile.defaultPath(environment: environment)
        let file = try ConfigFile.load(path: path, named: global.config != nil)
        let bindings = try file?.bindings() ?? .defaults
        func pick<Value>(_ flag: (value: Value, name: String)?, _ entry: ConfigFile.Entry<Value>?, _ fallback: Value) -> Setting<Value> {
            if let flag { return Setting(value: flag.value, origin: .commandLine(flag.name)) }
            if let entry { return Setting(value: entry.value, origin: .file(path, line: entry.line)) }
            return Setting(value: fallback, origin: .builtIn)
        }
        func option<Value>(_ value: Value?, _ name: String) -> (value: Value, name: String)? { value.map { ($0, name) } }

        var container = pick(option(global.container, "--container"), file?.container, Container.defaultURL(naming: .fatchat).path)
        if container.origin == .builtIn || container.origin.isFile,
           let named = environment["FATCHAT_CONTAINER"], !named.isEmpty, global.container == nil {
            container = Setting(value: named, origin: .environment("FATCHAT_CONTAINER"))
        }
        /// A setting whose default is none: `Value` is optional, and a flag not given must stay no flag at all.
        func pickSome<Value>(_ flag: Value?, _ name: String, _ entry: ConfigFile.Entry<Value>?) -> Setting<Value?> {
            pick(flag.map { (Optional($0), name) }, entry.map { .init(value: $0.value, line: $0.line) }, nil)
        }
        return Settings(
            configPath: path,
            configFound: file != nil,
            handle: pickSome(global.handle, "--handle", file?.handle),
            container: Setting(value: URL(fileURLWithPath: Self.expandingHome(container.value)), origin: container.origin),
            notifyCommand: pickSome(presence?.notifyCommand, "--notify-command", file?.notifyCommand),
            highlight: pick(nil, file?.highlight, []),
            mouse: pick(option(screen?.mouse, screen?.mouse == true ? "--mouse" : "--no-mouse"), file?.mouse, true),
            bell: pick(option(screen?.bell, screen?.bell == true ? "--bell" : "--no-bell"), file?.bell, false),
            desktopNotifications: pick(option(screen?.notify, screen?.notify == true ? "--notify" : "--no-notify"), file?.desktopNotifications, false),
            autoAway: pick(option(presence?.autoAway, "--auto-away"), file?.autoAway, 10),
            colors: Theme.names.map { name, path in
                (name, pick(nil, file?.colors[name], Theme()[keyPath: path]))
            },
            keys: KeyBindings.names.map { name, action in
                (name, pick(nil, file?.keys[name], bindings.keys(for: action)))
            },
            bindings: bindings)
    }

    /// `~/…` under the home directory.
    static func expandingHome(_ path: String) -> String {
        guard path.hasPrefix("~/") else { return path }
        return FileManager.default.homeDirectoryForCurrentUser.path + path.dropFirst(1)
    }

    /// What `fatchat config --print` prints: one setting a line, its value, and where it came from.
    func printed() -> [String] {
        var rows: [(String, String, SettingOrigin)] = [
            ("handle", handle.value ?? "(saved with /nick, else login name)", handle.origin),
            ("container", container.value.path, container.origin),
            ("notify-command", notifyCommand.value ?? "(none)", notifyCommand.origin),
            ("highlight", highlight.value.isEmpty ? "(none besides /highlight's)" : highlight.value.joined(separator: " "), highlight.origin),
            ("mouse", mouse.value ? "true" : "false", mouse.origin),
            ("bell", bell.value ? "true" : "false", bell.origin),
            ("desktop-notifications", desktopNotifications.value ? "true" : "false", desktopNotifications.origin),
            ("auto-away", autoAway.value == 0 ? "0 (never)" : "\(autoAway.value.formatted()) minutes", autoAway.origin),
        ]
        rows += colors.map { ("colors.\($0.name)", $0.setting.value.words, $0.setting.origin) }
        rows += keys.map { ("keys.\($0.name)", $0.setting.value.map(KeyBindings.describe).joined(separator: ", "), $0.setting.origin) }
        let nameWidth = rows.map(\.0.count).max() ?? 0
        let valueWidth = min(40, rows.map(\.1.count).max() ?? 0)
        let header = "# configuration file: \(configPath)\(configFound ? "" : " (not there; every setting is a default or a flag)")"
        return [header] + rows.map { name, value, origin in
            name.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + "  "
                + (value.count < valueWidth ? value.padding(toLength: valueWidth, withPad: " ", startingAt: 0) : value) + "  # " + origin.description
        }
    }
}

private extension SettingOrigin {
    var isFile: Bool {
        if case .file = self { return true }
        return false
    }
}
