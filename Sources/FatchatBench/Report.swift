import Foundation

/// A target a figure is held to; the comparison is fixed by the issue and never relaxed.
struct Target: Codable, Sendable {
    enum Comparison: String, Codable, Sendable {
        case atMost = "<="
        case atLeast = ">="
    }

    var comparison: Comparison
    var limit: Double
    var unit: String

    static func atMost(_ limit: Double, _ unit: String) -> Target { Target(comparison: .atMost, limit: limit, unit: unit) }
    static func atLeast(_ limit: Double, _ unit: String) -> Target { Target(comparison: .atLeast, limit: limit, unit: unit) }

    func isMet(by value: Double) -> Bool {
        guard value.isFinite else { return false }
        return comparison == .atMost ? value <= limit : value >= limit
    }

    var text: String { (comparison == .atMost ? "≤ " : "≥ ") + Report.format(limit) + " " + unit }
}

/// One measured figure, with the baseline measured in the same run.
struct Figure: Codable, Sendable {
    /// A stable key, such as `delivery.local.8.p99`.
    var id: String
    var label: String
    var value: Double
    var unit: String
    var baseline: Double?
    var baselineLabel: String?
    /// value ÷ baseline, when there is a baseline.
    var ratio: Double?
    var target: Target?
    var met: Bool?
    var distribution: Distribution?
    var runs: Int
    var note: String?

    init(id: String, label: String, value: Double, unit: String, baseline: Double? = nil, baselineLabel: String? = nil,
         target: Target? = nil, distribution: Distribution? = nil, runs: Int, note: String? = nil) {
        self.id = id
        self.label = label
        self.value = value
        self.unit = unit
        self.baseline = baseline
        self.baselineLabel = baselineLabel
        if let baseline, baseline != 0, baseline.isFinite { ratio = value / baseline }
        self.target = target
        met = target?.isMet(by: value)
        self.distribution = distribution
        self.runs = runs
        self.note = note
    }
}

/// Everything one run measured, printed as a table and written as JSON.
struct Report: Codable, Sendable {
    var started: String
    var commandLine: [String]
    var machine: MachineDescription
    var settings: [String: String]
    var figures: [Figure] = []
    var notes: [String] = []

    mutating func add(_ figure: Figure) {
        figures.append(figure)
        FileHandle.standardError.write(Data("  measured \(figure.id) = \(Self.format(figure.value)) \(figure.unit)\n".utf8))
    }

    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "n/a" }
        let magnitude = abs(value)
        if value == value.rounded(), magnitude < 1e15 { return String(format: "%.0f", value) }
        if magnitude >= 1000 { return String(format: "%.0f", value) }
        if magnitude >= 10 { return String(format: "%.1f", value) }
        if magnitude >= 0.1 { return String(format: "%.2f", value) }
        return String(format: "%.4f", value)
    }

    /// The table: figure, measured, baseline, ratio, target, verdict.
    var table: String {
        var rows = [["figure", "measured", "baseline (same run)", "ratio", "target", ""]]
        for f in figures {
            let baseline = f.baseline.map { Self.format($0) + " " + f.unit + (f.baselineLabel.map { " (\($0))" } ?? "") } ?? "-"
            let ratio = f.ratio.map { String(format: "%.2f×", $0) } ?? "-"
            let verdict = f.met.map { $0 ? "met" : "MISSED" } ?? ""
            rows.append([f.label, Self.format(f.value) + " " + f.unit, baseline, ratio, f.target?.text ?? "-", verdict])
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = rows.map { row in
            zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: " | ")
        }
        lines.insert(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-"), at: 1)
        return lines.joined(separator: "\n")
    }

    /// The whole printed report: machine, table, notes.
    var text: String {
        var out = "Fatchat benchmarks, \(started)\n" + machine.lines.map { "  " + $0 }.joined(separator: "\n") + "\n\n"
        out += table + "\n"
        if !notes.isEmpty { out += "\nNotes:\n" + notes.map { "- " + $0 }.joined(separator: "\n") + "\n" }
        return out
    }

    func writeJSON(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }
}
