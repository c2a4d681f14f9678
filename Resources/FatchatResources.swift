import Foundation

/// Fatchat's text that lives outside the code: help, and the formats of notification alerts.
///
/// The files are SwiftPM resources of this target. They are looked up next to
/// the executable; when they cannot be found (a binary copied elsewhere), a
/// short built-in text says so instead of crashing.
public enum FatchatResources {
    /// Keys, commands and tips for the help overlay and `/help`.
    public static var helpText: String {
        text("help.txt") ?? "The help text is not installed next to this binary; see the README."
    }

    /// Alert formats by localization key, for the current language (English when there is no better match).
    public static var alertFormats: [String: String] {
        let language = ProcessInfo.processInfo.environment["LANG"].map { String($0.prefix(2)) } ?? "en"
        for name in ["alerts.\(language).json", "alerts.en.json"] {
            if let data = text(name).map({ Data($0.utf8) }),
               let formats = try? JSONSerialization.jsonObject(with: data) as? [String: String] {
                return formats
            }
        }
        return ["message_alert": "%@: %@ (in #%@)"]
    }

    /// The contents of a resource file, or `nil` if it cannot be found.
    public static func text(_ name: String) -> String? {
        guard let url = resourceDirectories().lazy.map({ $0.appendingPathComponent(name) })
            .first(where: { FileManager.default.isReadableFile(atPath: $0.path) }) else { return nil }
        return try? String(contentsOf: url, encoding: .utf8)
    }

    private static let bundleName = "Fatchat_FatchatResources.resources"

    private static func resourceDirectories() -> [URL] {
        var places: [URL] = []
        if let override = ProcessInfo.processInfo.environment["FATCHAT_RESOURCES"] {
            places.append(URL(fileURLWithPath: override))
        }
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath().deletingLastPathComponent()
        places.append(executable.appendingPathComponent(bundleName))
        places.append(Bundle.main.bundleURL.appendingPathComponent(bundleName))
        places.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(bundleName))
        // Where `scripts/install.sh` puts them: PREFIX/share/fatchat beside PREFIX/bin.
        places.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("share/fatchat"))
        places.append(URL(fileURLWithPath: "/usr/local/share/fatchat"))
        places.append(URL(fileURLWithPath: "/usr/share/fatchat"))
        return places
    }
}
