import FatchatCore

/// The bot's standard input: lines split as the bot splits them, each read as `--json` input and as plain input.
enum BotInputTarget {
    static func run(_ bytes: [UInt8]) -> String {
        var splitter = LineSplitter(limit: 4096)
        let pieces = splitter.feed(bytes) + splitter.finish()
        var outcomes: [String] = []
        for case .line(let line) in pieces {
            outcomes.append(describe { try BotInput.json(line) })
            outcomes.append(describe { try BotInput.plain(line) })
        }
        return outcomes.isEmpty ? "no lines" : outcomes.joined(separator: "; ")
    }

    private static func describe(_ parse: () throws -> Command) -> String {
        do {
            return "\(try parse())"
        } catch {
            return "refused: \(error)"
        }
    }
}
