import Foundation
import Synchronization

/// The damaged rows this process has stepped over, each reported once.
///
/// Readers call `note` every time they skip a row, which may be on every
/// fetch; only the first sighting of a row reaches the report handler. The
/// log keeps at most `capacity` rows, so a table full of garbage cannot
/// grow it without bound. By default a line goes to standard error, unless
/// that is a terminal: a full-screen client draws there, so it reads `rows`
/// or installs its own handler with `report(to:)`.
public enum DamagedRowLog {
    /// How many distinct rows are remembered and reported; past it, one line says that more were skipped.
    public static let capacity = 1_000

    private struct State {
        var seen: Set<DamagedRow> = []
        var order: [DamagedRow] = []
        var overflowed = false
        var report: @Sendable (String) -> Void = { line in
            guard isatty(STDERR_FILENO) == 0 else { return }
            FileHandle.standardError.write(Data(("fatchat: " + line + "\n").utf8))
        }
    }

    private static let state = Mutex(State())

    /// Every damaged row skipped so far in this process, in the order first seen.
    public static var rows: [DamagedRow] { state.withLock { $0.order } }

    /// Sends each newly skipped row's line to `handler` instead of standard error (a full-screen client shows it its own way).
    ///
    /// With `replaying`, the lines of the rows skipped before this call go to
    /// `handler` too, first: a client that took over the terminal late misses none.
    public static func report(replaying: Bool = false, to handler: @escaping @Sendable (String) -> Void) {
        let earlier: [String] = state.withLock { state in
            state.report = handler
            guard replaying else { return [] }
            return state.order.map(line) + (state.overflowed ? [overflowLine] : [])
        }
        earlier.forEach(handler)
    }

    /// The line that reports a damaged row.
    private static func line(_ row: DamagedRow) -> String {
        "skipped the \(row.description). `fatchat admin check` lists damaged rows."
    }

    private static let overflowLine = "more than \(capacity) damaged rows were skipped; run `fatchat admin check` to list them."

    /// Records that a reader skipped `row`; reports it the first time.
    static func note(_ row: DamagedRow) {
        let reported: (String, @Sendable (String) -> Void)? = state.withLock { state in
            guard !state.seen.contains(row) else { return nil }
            guard state.order.count < capacity else {
                if state.overflowed { return nil }
                state.overflowed = true
                return (overflowLine, state.report)
            }
            state.seen.insert(row)
            state.order.append(row)
            return (line(row), state.report)
        }
        if let (text, report) = reported { report(text) }
    }
}
