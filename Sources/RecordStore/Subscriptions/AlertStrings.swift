import Foundation

/// Localized alert formats by key, such as `FatchatResources.alertFormats` loads: `"message_alert": "%@: %@ (in #%@)"`.
public struct AlertStrings: Hashable, Sendable {
    /// The formats by key.
    public var formats: [String: String]

    /// A table of formats; empty means every key is its own format.
    public init(_ formats: [String: String] = [:]) {
        self.formats = formats
    }

    /// Fills `key`'s format (the key itself if unknown) with `arguments`: `%@` in turn, `%n$@` by position, `%%` as `%`.
    public func render(_ key: String, _ arguments: [String]) -> String {
        let format = Array(formats[key] ?? key)
        var out = ""
        var next = 0
        var i = 0
        while i < format.count {
            guard format[i] == "%", i + 1 < format.count else { out.append(format[i]); i += 1; continue }
            if format[i + 1] == "%" { out.append("%"); i += 2; continue }
            if format[i + 1] == "@" {
                out += next < arguments.count ? arguments[next] : ""
                next += 1
                i += 2
                continue
            }
            var j = i + 1
            var digits = ""
            while j < format.count, format[j].isASCII, format[j].isNumber { digits.append(format[j]); j += 1 }
            if !digits.isEmpty, j + 1 < format.count, format[j] == "$", format[j + 1] == "@", let n = Int(digits), n >= 1 {
                out += n <= arguments.count ? arguments[n - 1] : ""
                i = j + 2
                continue
            }
            out.append("%")
            i += 1
        }
        return out
    }
}
