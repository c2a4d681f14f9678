/// Lines sent from one channel's input, browsed with ↑/↓ without losing the draft.
public struct InputHistory: Sendable, Equatable {
    /// Sent lines, oldest first.
    public private(set) var entries: [String] = []
    /// Most lines kept.
    public let capacity: Int
    private var position: Int?      // index into entries while browsing
    private var draft: String = ""

    /// Creates an empty history keeping at most `capacity` lines.
    public init(capacity: Int = 500) { self.capacity = max(1, capacity) }

    /// Records a sent line (an immediate repeat is kept once) and stops browsing.
    public mutating func record(_ line: String) {
        position = nil
        draft = ""
        guard !line.isEmpty, entries.last != line else { return }
        entries.append(line)
        if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
    }

    /// The older line to show after ↑, saving `current` as the draft on the first step.
    public mutating func older(current: String) -> String? {
        guard !entries.isEmpty else { return nil }
        switch position {
        case nil:
            draft = current
            position = entries.count - 1
        case let index? where index > 0:
            position = index - 1
        default:
            return nil
        }
        return position.map { entries[$0] }
    }

    /// The newer line to show after ↓; past the newest, the saved draft comes back.
    public mutating func newer() -> String? {
        guard let index = position else { return nil }
        if index + 1 < entries.count {
            position = index + 1
            return entries[index + 1]
        }
        position = nil
        return draft
    }
}
