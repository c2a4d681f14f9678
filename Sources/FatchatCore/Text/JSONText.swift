import Foundation

/// JSON lines for output, written by hand so that every string goes through one escaper.
///
/// `JSONSerialization` and `JSONEncoder` pass C1 controls, DEL and bidi controls through raw,
/// and a terminal that shows the line acts on them. Here they, C0 and U+2028/U+2029 become
/// `\uXXXX`, so a JSON line is inert whatever its strings held; any JSON parser reads them back.
public enum JSONText {
    /// `text` as a quoted JSON string, every control character escaped as `\uXXXX`.
    public static func quoted(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return "\"" + text + "\"" }
        var out = String.UnicodeScalarView()
        out.append("\"")
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" {
                out.append("\\")
                out.append(scalar)
            } else if needsEscape(scalar) {
                out.append(contentsOf: "\\u".unicodeScalars)
                let hex = String(scalar.value, radix: 16)
                out.append(contentsOf: (String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        out.append("\"")
        return String(out)
    }

    /// One JSON object on one line, keys sorted, for a dictionary of strings, numbers,
    /// booleans, arrays and dictionaries; anything else is written as its description.
    public static func object(_ fields: [String: Any]) -> String {
        "{" + fields.keys.sorted().map { quoted($0) + ":" + value(fields[$0] as Any) }.joined(separator: ",") + "}"
    }

    /// One value as JSON; a non-finite number, which JSON cannot hold, is `null`.
    static func value(_ any: Any) -> String {
        switch any {
        case let text as String: return quoted(text)
        case let text as Substring: return quoted(String(text))
        case let flag as Bool: return flag ? "true" : "false"
        case let number as Int: return String(number)
        case let number as Int64: return String(number)
        case let number as Int32: return String(number)
        case let number as UInt8: return String(number)
        case let number as Double: return number.isFinite ? "\(number)" : "null"
        case let object as [String: Any]: return Self.object(object)
        case let list as [Any]: return "[" + list.map(value).joined(separator: ",") + "]"
        default:
            let mirror = Mirror(reflecting: any)
            guard mirror.displayStyle == .optional else { return quoted(String(describing: any)) }
            return mirror.children.first.map { value($0.value) } ?? "null"
        }
    }

    /// Whether a scalar cannot stand raw in a JSON string: quote and backslash (escaped with a
    /// backslash), and C0, DEL, C1, bidi controls and U+2028/U+2029 (escaped as `\uXXXX`).
    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return v < 0x20 || v == 0x22 || v == 0x5C || (v >= 0x7F && v < 0xA0) || v == 0x2028 || v == 0x2029
            || Sanitizer.isBidiControl(v)
    }
}
