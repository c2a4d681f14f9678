import FatchatCore
import Foundation

/// The help overlay's text: the commands from the grammar, and the keys from the top-level `Resources/help.txt`.
public enum HelpText {
    /// The help text; if the resource file is missing, the command list and a one-line note.
    public static var bundled: String {
        (try? Help.text(for: nil)) ?? "Keys: F1 help, Ctrl-N/Ctrl-P channels, PgUp/PgDn scroll, /quit."
    }

    /// The help text, with the keys a configuration file moved said at its top.
    public static func text(with keys: KeyBindings) -> String {
        let moved = KeyBindings.names.filter { keys.keys(for: $0.action) != KeyBindings.defaults.keys(for: $0.action) }
        guard !moved.isEmpty else { return bundled }
        let said = moved.map { "  \($0.name): " + keys.keys(for: $0.action).map(KeyBindings.describe).joined(separator: ", ") }
        return (["Your configuration file binds these keys; those below are the defaults."] + said).joined(separator: "\n") + "\n\n" + bundled
    }
}
