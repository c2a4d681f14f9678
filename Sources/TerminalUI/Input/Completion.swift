/// The names tab completion may offer, supplied by the client for the current channel.
public struct CompletionCandidates: Sendable, Equatable {
    /// Command names including the slash, e.g. `/join`.
    public var commands: [String]
    /// Channel names as the user types them.
    public var channels: [String]
    /// Handles of the current channel's members.
    public var handles: [String]
    /// Commands whose argument is a channel name.
    public var channelCommands: Set<String>

    /// Creates a candidate set.
    public init(commands: [String] = [], channels: [String] = [], handles: [String] = [],
                channelCommands: Set<String> = ["/join", "/part", "/leave", "/delete"]) {
        self.commands = commands
        self.channels = channels
        self.handles = handles
        self.channelCommands = channelCommands
    }
}

/// An open round of tab completion: repeated Tab cycles through the matches.
struct CompletionRound: Sendable, Equatable {
    var wordStart: Int
    var matches: [String]
    var index: Int
    var insertedLength: Int

    /// Finds matches for the word ending at `cursor`; nil when nothing matches.
    static func start(text: [Character], cursor: Int, candidates: CompletionCandidates) -> CompletionRound? {
        var wordStart = cursor
        while wordStart > 0, text[wordStart - 1] != " " { wordStart -= 1 }
        let word = String(text[wordStart..<cursor]).lowercased()
        let before = String(text[..<wordStart])
        let isFirstWord = before.allSatisfy { $0 == " " }
        let firstWord = before.split(separator: " ").first.map(String.init)?.lowercased()

        let pool: [String]
        var suffix = " "
        if isFirstWord, word.hasPrefix("/") {
            pool = candidates.commands
        } else if word.hasPrefix("#") || (firstWord.map { candidates.channelCommands.contains($0) } ?? false) {
            pool = candidates.channels
        } else {
            pool = candidates.handles
            if isFirstWord { suffix = ": " }
        }
        var seen = Set<String>()
        let matches = pool.filter { $0.lowercased().hasPrefix(word) && seen.insert($0).inserted }
            .sorted { $0.lowercased() < $1.lowercased() }
            .map { $0 + suffix }
        guard !matches.isEmpty else { return nil }
        return CompletionRound(wordStart: wordStart, matches: matches, index: 0, insertedLength: cursor - wordStart)
    }
}
