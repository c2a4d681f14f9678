import Foundation

/// The help overlay's text, kept in `Sources/TerminalUI/Resources/help.txt`.
public enum HelpText {
    /// Name of the resource bundle SwiftPM builds next to the executable.
    static let bundleName = "Fatchat_TerminalUI.resources"

    /// The bundled help text, or a short fallback when the resource cannot be found.
    ///
    /// This looks the bundle up itself instead of using `Bundle.module`, whose generated
    /// accessor calls `fatalError` when the bundle is missing (e.g. a binary copied elsewhere).
    public static var bundled: String {
        for directory in searchDirectories {
            let url = directory.appendingPathComponent(bundleName).appendingPathComponent("help.txt")
            if let text = try? String(contentsOf: url, encoding: .utf8) { return text }
        }
        return fallback
    }

    /// Shown when the resource is missing.
    public static let fallback = """
        Fatchat keys: F1 help · Alt-1…9, Ctrl-N/Ctrl-P channels · PgUp/PgDn scroll · Tab complete · Ctrl-C quit
        (the full help text, help.txt, was not found next to the program)
        """

    private static var searchDirectories: [URL] {
        var directories: [URL] = []
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            directories.append(executable.deletingLastPathComponent())
        }
        directories.append(Bundle.main.bundleURL)
        directories.append(URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath().deletingLastPathComponent())
        return directories
    }
}
