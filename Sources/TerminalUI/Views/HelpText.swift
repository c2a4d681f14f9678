import Foundation

/// The help overlay's text, kept in `Resources/help.txt`.
public enum HelpText {
    /// The bundled help text, or a one-line fallback if the resource is missing.
    public static var bundled: String {
        guard let url = Bundle.module.url(forResource: "help", withExtension: "txt"),
              let text = try? String(contentsOf: url, encoding: .utf8) else {
            return "Help text not found. Keys: F1 help, Ctrl-N/Ctrl-P channels, PgUp/PgDn scroll, /quit."
        }
        return text
    }
}
