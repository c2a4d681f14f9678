import Foundation
import Synchronization

/// The wrapped lines of the messages drawn last, so that a frame wraps only what changed.
///
/// Wrapping is the costly part of a frame, and a keystroke changes the input line, not the
/// history: each message keeps its lines until it, its sender's label, the width, my handle
/// or the theme change. Lines of messages no longer loaded are dropped at the next frame.
public final class MessageLineCache: Sendable {
    /// What every message's lines depend on besides the message itself.
    struct Context: Equatable {
        var width: Int
        var myHandle: String
        var highlightWords: [String]
        var theme: Theme
        var timeZone: TimeZone
    }

    private struct Entry {
        var message: MessageItem
        var label: MessageLabels
        var lines: [[Segment]]
    }

    private struct State {
        var context: Context?
        var entries: [String: Entry] = [:]
        var wrapCount = 0
    }

    // The client draws from one thread; the lock only makes the type Sendable, as RenderOptions is.
    private let state = Mutex(State())

    /// An empty cache.
    public init() {}

    /// Messages wrapped since the cache was made; a frame that finds every message's lines here adds none.
    public var wrapCount: Int { state.withLock { $0.wrapCount } }

    /// Each message's lines, from the cache where the message and its label are unchanged,
    /// else from `wrap`, whose result is kept for the next frame.
    func lines(for messages: [MessageItem], labels: [MessageLabels], context: Context,
               wrap: (MessageItem, MessageLabels) -> [[Segment]]) -> [[[Segment]]] {
        state.withLock { state in
            if state.context != context {
                state.context = context
                state.entries.removeAll()
            }
            var kept: [String: Entry] = [:]
            kept.reserveCapacity(messages.count)
            var result: [[[Segment]]] = []
            result.reserveCapacity(messages.count)
            for (message, label) in zip(messages, labels) {
                if let entry = state.entries[message.id] ?? kept[message.id], entry.label == label, entry.message == message {
                    kept[message.id] = entry
                    result.append(entry.lines)
                } else {
                    let lines = wrap(message, label)
                    state.wrapCount += 1
                    kept[message.id] = Entry(message: message, label: label, lines: lines)
                    result.append(lines)
                }
            }
            state.entries = kept
            return result
        }
    }
}
