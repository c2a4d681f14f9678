/// A time of day as a clock shows it, `09:05` or `09:05:30`.
///
/// Written by hand because it is drawn on every message line and printed on every plain
/// bot line, and Foundation's `String(format:)` costs tens of thousands of instructions a
/// call (about 45 k each, under callgrind, in the first frame).
public enum ClockText {
    /// The parts joined by `:`, each of at least two digits, as `%02d:%02d` prints them.
    public static func of(_ parts: Int...) -> String {
        parts.map { (0..<10).contains($0) ? "0" + String($0) : String($0) }.joined(separator: ":")
    }
}
