/// What the client should do after the editor saw an input event.
public enum EditOutcome: Hashable, Sendable {
    /// The editor changed (or consumed the key); redraw the input line.
    case edited
    /// Enter on a non-empty line: send this text. The editor is now empty.
    case submit(String)
    /// Not an editing key: the client handles it (PgUp, Alt-1, Ctrl-N, F1, …).
    case ignored
}

/// A readline-style input line: cursor motion, kill and yank, word motion, per-channel
/// history and tab completion, over grapheme clusters.
public struct LineEditor: Sendable, Equatable {
    /// The line's graphemes.
    public private(set) var graphemes: [Character] = []
    /// The cursor, as an index into ``graphemes`` (0…count).
    public private(set) var cursor: Int = 0
    /// Text removed by the kill commands, newest last; Ctrl-Y yanks the newest.
    public private(set) var killRing: [String] = []
    /// Lines sent from this input.
    public var history = InputHistory()
    private var completion: CompletionRound?
    private static let killRingCapacity = 16

    /// Creates an empty editor.
    public init() {}

    /// The line as a string.
    public var text: String { String(graphemes) }

    /// Replaces the line and puts the cursor at its end.
    public mutating func setText(_ newText: String) {
        graphemes = Array(newText)
        cursor = graphemes.count
        completion = nil
    }

    /// Applies one input event; `candidates` feed tab completion.
    public mutating func handle(_ event: InputEvent, candidates: CompletionCandidates = CompletionCandidates()) -> EditOutcome {
        switch event {
        case .paste(let pasted):
            completion = nil
            insert(pasted)
            return .edited
        case .key(let key):
            if key != .tab { completion = nil }
            return handle(key, candidates: candidates)
        case .mouse:
            return .ignored
        }
    }

    private mutating func handle(_ key: Key, candidates: CompletionCandidates) -> EditOutcome {
        switch key {
        case .character(let c): insert(String(c))
        case .enter:
            let line = text
            guard !line.trimmingSpaces.isEmpty else { return .edited }
            history.record(line)
            setText("")
            return .submit(line)
        case .altEnter: insert("\n")
        case .tab: complete(candidates)
        case .left, .control("b"): cursor = max(0, cursor - 1)
        case .right, .control("f"): cursor = min(graphemes.count, cursor + 1)
        case .home, .control("a"): cursor = 0
        case .end, .control("e"): cursor = graphemes.count
        case .backspace:
            if cursor > 0 { graphemes.remove(at: cursor - 1); cursor -= 1 }
        case .delete, .control("d"):
            if cursor < graphemes.count { graphemes.remove(at: cursor) }
        case .control("k"): kill(cursor..<graphemes.count)
        case .control("u"): kill(0..<cursor)
        case .control("w"), .altBackspace: kill(spaceWordStart()..<cursor)
        case .alt("d"): kill(cursor..<wordEnd())
        case .control("y"): if let last = killRing.last { insert(last) }
        case .alt("b"): cursor = wordStart()
        case .alt("f"): cursor = wordEnd()
        case .control("t"): transpose()
        case .up:
            if let line = history.older(current: text) { setText(line) }
        case .down:
            if let line = history.newer() { setText(line) }
        default:
            return .ignored
        }
        return .edited
    }

    /// Inserts text at the cursor; scalars that join the grapheme before (combining marks,
    /// ZWJ sequences typed one scalar at a time) merge with it.
    public mutating func insert(_ piece: String) {
        let before = String(graphemes[..<cursor]) + piece
        let after = String(graphemes[cursor...])
        let beforeCount = before.count
        graphemes = Array(before + after)
        cursor = min(beforeCount, graphemes.count)
    }

    private mutating func kill(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        killRing.append(String(graphemes[range]))
        if killRing.count > Self.killRingCapacity { killRing.removeFirst() }
        graphemes.removeSubrange(range)
        cursor = range.lowerBound
    }

    private mutating func transpose() {
        guard graphemes.count >= 2, cursor > 0 else { return }
        let i = cursor == graphemes.count ? cursor - 1 : cursor
        graphemes.swapAt(i - 1, i)
        cursor = i + 1
    }

    private mutating func complete(_ candidates: CompletionCandidates) {
        if var round = completion {
            round.index = (round.index + 1) % round.matches.count
            replaceCompletion(&round)
            completion = round
        } else if var round = CompletionRound.start(text: graphemes, cursor: cursor, candidates: candidates) {
            replaceCompletion(&round)
            completion = round
        }
    }

    private mutating func replaceCompletion(_ round: inout CompletionRound) {
        let replacement = Array(round.matches[round.index])
        let range = round.wordStart..<min(graphemes.count, round.wordStart + round.insertedLength)
        graphemes.replaceSubrange(range, with: replacement)
        round.insertedLength = replacement.count
        cursor = round.wordStart + replacement.count
    }

    /// Start of the whitespace-delimited word before the cursor (Ctrl-W).
    private func spaceWordStart() -> Int {
        var i = cursor
        while i > 0, graphemes[i - 1] == " " { i -= 1 }
        while i > 0, graphemes[i - 1] != " " { i -= 1 }
        return i
    }

    /// Start of the alphanumeric word before the cursor (Alt-B).
    private func wordStart() -> Int {
        var i = cursor
        while i > 0, !graphemes[i - 1].isWordPart { i -= 1 }
        while i > 0, graphemes[i - 1].isWordPart { i -= 1 }
        return i
    }

    /// End of the alphanumeric word after the cursor (Alt-F).
    private func wordEnd() -> Int {
        var i = cursor
        while i < graphemes.count, !graphemes[i].isWordPart { i += 1 }
        while i < graphemes.count, graphemes[i].isWordPart { i += 1 }
        return i
    }
}

extension Character {
    fileprivate var isWordPart: Bool { isLetter || isNumber || self == "_" }
}

extension String {
    fileprivate var trimmingSpaces: Substring {
        drop { $0.isWhitespace }
    }
}
