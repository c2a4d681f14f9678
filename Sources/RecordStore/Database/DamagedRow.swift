import Foundation

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

    /// The error a caller sees when it asked for this row by name, worded as ``DamagedRowLog`` words its lines.
    var storeError: StoreError {
        StoreError(.badDatabase, "The \(description) does not decode, so it was skipped. \(DamagedRowLog.naming.checking()) lists such rows; whoever wrote it can delete it.")
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
