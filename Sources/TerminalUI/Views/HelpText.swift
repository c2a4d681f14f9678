import FatchatCore
import Foundation

/// The help overlay's text: the commands from the grammar, and the keys from the top-level `Resources/help.txt`.
public enum HelpText {
    /// The help text; if the resource file is missing, the command list and a one-line note.
    public static var bundled: String {
        (try? Help.text(for: nil)) ?? "Keys: F1 help, Ctrl-N/Ctrl-P channels, PgUp/PgDn scroll, /quit."
    }
}
