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
///
/// The log is one per process, while each container has its own naming, so
/// the program words the log, once at startup, with `word(as:)`: a row read
/// through any container is then reported the same way. Until then the
/// lines name RecordStore's API.
public enum DamagedRowLog {
    /// How many distinct rows are remembered and reported; past it, one line says that more were skipped.
    public static let capacity = 1_000

    private struct State {
        var seen: Set<DamagedRow> = []
        var order: [DamagedRow] = []
        var overflowed = false
        var naming = ContainerNaming()
        /// Where lines go; nil is standard error.
        var report: (@Sendable (String) -> Void)?
    }

    private static let state = Mutex(State())

    /// Every damaged row skipped so far in this process, in the order first seen.
    public static var rows: [DamagedRow] { state.withLock { $0.order } }

    /// The names the lines, and the error of a row asked for by name, use: RecordStore's, or the program's once it gave them.
    public static var naming: ContainerNaming { state.withLock { $0.naming } }

    /// Words every later line and error about damaged rows with `naming`; a program calls it once, at startup.
    public static func word(as naming: ContainerNaming) {
        state.withLock { $0.naming = naming }
    }

    /// Sends each newly skipped row's line to `handler` instead of standard error (a full-screen client shows it its own way).
    ///
    /// With `replaying`, the lines of the rows skipped before this call go to
    /// `handler` too, first: a client that took over the terminal late misses none.
    public static func report(replaying: Bool = false, to handler: @escaping @Sendable (String) -> Void) {
        let earlier: [String] = state.withLock { state in
            state.report = handler
            guard replaying else { return [] }
            return state.order.map { line($0, state.naming) } + (state.overflowed ? [overflowLine(state.naming)] : [])
        }
        earlier.forEach(handler)
    }

    /// The line that reports a damaged row.
    private static func line(_ row: DamagedRow, _ naming: ContainerNaming) -> String {
        "skipped the \(row.description). \(naming.checking()) lists damaged rows."
    }

    /// The one line that says the log is full.
    private static func overflowLine(_ naming: ContainerNaming) -> String {
        "more than \(capacity) damaged rows were skipped; run \(naming.checking()) to list them."
    }

    /// Writes `line` to standard error after the program's name in lower case (`fatchat:`), unless that is a terminal.
    private static func writeToStandardError(_ line: String, _ naming: ContainerNaming) {
        guard isatty(STDERR_FILENO) == 0 else { return }
        FileHandle.standardError.write(Data((naming.programName.lowercased() + ": " + line + "\n").utf8))
    }

    /// Records that a reader skipped `row`; reports it the first time.
    static func note(_ row: DamagedRow) {
        let reported: (String, (@Sendable (String) -> Void)?, ContainerNaming)? = state.withLock { state in
            guard !state.seen.contains(row) else { return nil }
            guard state.order.count < capacity else {
                if state.overflowed { return nil }
                state.overflowed = true
                return (overflowLine(state.naming), state.report, state.naming)
            }
            state.seen.insert(row)
            state.order.append(row)
            return (line(row, state.naming), state.report, state.naming)
        }
        guard let (text, report, naming) = reported else { return }
        if let report { report(text) } else { writeToStandardError(text, naming) }
    }
}
