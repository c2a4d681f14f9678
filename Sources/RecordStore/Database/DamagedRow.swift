import Foundation
import Synchronization

/// A row of a database table that does not decode: skipped wherever it is read, reported once, listed by `admin check`.
///
/// Anyone who can write a shared container can put anything into its
/// tables, so a bad row is input to step over, not a reason to stop: it
/// never traps, never stalls the change feed, and its neighbours are read.
public struct DamagedRow: Hashable, Sendable, Error, CustomStringConvertible {
    /// The table that holds the row.
    public var table: String
    /// Which row: a record's zone and name, a change's sequence number, a subscription's owner and ID.
    public var key: String
    /// What is wrong with it.
    public var problem: String

    /// Describes a damaged row; `key` and `problem` may quote the file, and are made inert when shown.
    public init(table: String, key: String, problem: String) {
        self.table = table
        self.key = key
        self.problem = problem
    }

    /// One line, safe for a terminal: text from the file is shortened and its control characters escaped.
    public var description: String {
        "\(table) row \(Self.inert(key)): \(Self.inert(problem.hasSuffix(".") ? String(problem.dropLast()) : problem))"
    }

    /// The error a caller sees when it asked for this row by name.
    var storeError: StoreError {
        StoreError(.badDatabase, "The \(description) does not decode, so it was skipped. `fatchat admin check` lists such rows; whoever wrote it can delete it.")
    }

    /// `text` with C0, C1, DEL and bidi controls as `\u{…}`, cut to 120 characters.
    static func inert(_ text: String) -> String {
        var out = ""
        for (index, scalar) in text.unicodeScalars.enumerated() {
            if index == 120 { return out + "…" }
            let v = scalar.value
            let control = v < 0x20 || (0x7F...0x9F).contains(v) || (0x200E...0x200F).contains(v)
                || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v) || v == 0x061C
            out += control ? "\\u{\(String(v, radix: 16))}" : String(scalar)
        }
        return out
    }
}

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
    public static func report(to handler: @escaping @Sendable (String) -> Void) {
        state.withLock { $0.report = handler }
    }

    /// Records that a reader skipped `row`; reports it the first time.
    static func note(_ row: DamagedRow) {
        let line: (String, @Sendable (String) -> Void)? = state.withLock { state in
            guard !state.seen.contains(row) else { return nil }
            guard state.order.count < capacity else {
                if state.overflowed { return nil }
                state.overflowed = true
                return ("more than \(capacity) damaged rows were skipped; run `fatchat admin check` to list them.", state.report)
            }
            state.seen.insert(row)
            state.order.append(row)
            return ("skipped the \(row.description). `fatchat admin check` lists damaged rows.", state.report)
        }
        if let (text, report) = line { report(text) }
    }
}
