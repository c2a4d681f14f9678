import Foundation
import FatchatResources

/// The help text: commands from the grammar, keys and the rest from `Resources/help.txt`.
public enum Help {
    /// The whole help, or one command's line.
    public static func text(for topic: String?) throws(CommandError) -> String {
        if let topic {
            guard let entry = CommandGrammar.entries.first(where: { $0.name == topic.lowercased() }) else {
                throw CommandError("No help for '\(topic)'; /help lists every command.")
            }
            var line = "\(entry.usage) — \(entry.summary)"
            if CommandGrammar.messageCommands.contains(entry.name) { line += "\n" + CommandGrammar.messageReferenceHelp }
            return line
        }
        let width = CommandGrammar.entries.map(\.usage.count).max() ?? 0
        let commands = CommandGrammar.entries.map { $0.usage.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.summary }
        return ([FatchatResources.helpText, "Commands:"] + commands.map { "  " + $0 } + ["", ChannelName.rules, CommandGrammar.messageReferenceHelp])
            .joined(separator: "\n")
    }
}

extension Help {
    /// The manual page's CHAT COMMANDS and KEYS sections, in mdoc, from the same
    /// grammar and help text that `/help` shows, so the page cannot drift from the program.
    public static func manualSections() -> String {
        var page = [".Sh CHAT COMMANDS",
                    "The full-screen client and the bot read the same commands; a line that does not start with",
                    ".Ql /",
                    "is a message to the current channel, and a line starting with",
                    ".Ql //",
                    "posts the rest with one slash.",
                    ".Bl -tag -width Ds"]
        for entry in CommandGrammar.entries {
            page += [".It Li \(Manual.escaped(entry.usage))", Manual.escaped(entry.summary) + "."]
        }
        page += [".El", ".Pp", Manual.escaped(CommandGrammar.messageReferenceHelp), ".Pp", Manual.escaped(ChannelName.rules)]
        page += [".Sh KEYS", "In the full-screen client:", ".Bd -literal -offset indent"]
        page += FatchatResources.helpText.split(separator: "\n", omittingEmptySubsequences: false).map { Manual.escaped(String($0)) }
        page += [".Ed"]
        return page.joined(separator: "\n") + "\n"
    }
}

/// Text made safe for a line of an mdoc manual page.
enum Manual {
    /// A backslash becomes `\e`, a character outside ASCII its `\[uXXXX]` escape, and a
    /// line that would start with a request character gets `\&` before it.
    static func escaped(_ text: String) -> String {
        var plain = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": plain += "\\e"
            case _ where scalar.isASCII: plain.unicodeScalars.append(scalar)
            default: plain += "\\[u" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4) + "]"
            }
        }
        return plain.hasPrefix(".") || plain.hasPrefix("'") ? "\\&" + plain : plain
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
