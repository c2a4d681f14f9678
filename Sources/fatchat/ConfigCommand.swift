import ArgumentParser
import Foundation

/// `fatchat config`: the effective settings, and where each one came from.
struct ConfigCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show the effective settings and where each came from: a flag, the environment, the configuration file (with its line), or the default.",
        discussion: """
            The configuration file is YAML: $XDG_CONFIG_HOME/fatchat/config.yaml (else ~/.config/fatchat/config.yaml), or --config FILE. \
            It holds handle, container, notify-command, highlight, mouse, bell, desktop-notifications, auto-away, \
            colors (a style for each part of the screen) and keys (keys for the client's actions). Flags override it. \
            An unknown setting or a bad value is an error that names its line, and no command starts until it is mended. \
            Flags given here are shown as they would apply to the client.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var screen: ScreenOptions
    @OptionGroup var presence: PresenceOptions
    @Flag(name: .customLong("print"), help: "Print the settings (what `fatchat config` does anyway).") var printSettings = false
    @Flag(help: "Print only the configuration file's path.") var path = false

    func execute() throws {
        if path {
            Output.line(global.config ?? ConfigFile.defaultPath(environment: ProcessInfo.processInfo.environment))
            return
        }
        for line in try Settings.resolve(global: global, screen: screen, presence: presence).printed() { Output.line(line) }
    }
}
