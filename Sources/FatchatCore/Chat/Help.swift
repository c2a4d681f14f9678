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
