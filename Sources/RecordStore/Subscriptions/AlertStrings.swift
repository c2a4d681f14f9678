import Foundation

/// Localized alert formats by key, read from a `Localizable.strings` file: `"key" = "format";`.
public struct AlertStrings: Hashable, Sendable {
    /// The formats by key.
    public var formats: [String: String]

    /// A table of formats; empty means every key is its own format.
    public init(_ formats: [String: String] = [:]) {
        self.formats = formats
    }

    /// Reads a `.strings` file (UTF-8): `"key" = "value";` lines, with `//` and `/* */` comments.
    public init(contentsOf url: URL) throws {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else {
            throw StoreError(.invalidArguments, "Cannot read the alert strings at \(url.path).")
        }
        try self.init(parsing: text)
    }

    /// Parses the text of a `.strings` file.
    public init(parsing text: String) throws {
        var formats: [String: String] = [:]
        var scanner = StringsScanner(chars: Array(text))
        while let key = try scanner.nextString() {
            try scanner.expect("=")
            guard let value = try scanner.nextString() else {
                throw StoreError(.invalidArguments, "Alert strings: the key \"\(key)\" has no value.")
            }
            try scanner.expect(";")
            formats[key] = value
        }
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

/// Reads quoted strings and punctuation out of a `.strings` file, skipping whitespace and comments.
private struct StringsScanner {
    let chars: [Character]
    var i = 0

    mutating func skip() {
        while i < chars.count {
            if chars[i].isWhitespace { i += 1; continue }
            if chars[i] == "/", i + 1 < chars.count, chars[i + 1] == "/" {
                while i < chars.count, chars[i] != "\n" { i += 1 }
                continue
            }
            if chars[i] == "/", i + 1 < chars.count, chars[i + 1] == "*" {
                i += 2
                while i + 1 < chars.count, !(chars[i] == "*" && chars[i + 1] == "/") { i += 1 }
                i += 2
                continue
            }
            return
        }
    }

    mutating func expect(_ c: Character) throws {
        skip()
        guard i < chars.count, chars[i] == c else {
            throw StoreError(.invalidArguments, "Alert strings: expected '\(c)' at character \(i + 1).")
        }
        i += 1
    }

    mutating func nextString() throws -> String? {
        skip()
        guard i < chars.count else { return nil }
        guard chars[i] == "\"" else {
            throw StoreError(.invalidArguments, "Alert strings: expected a quoted string at character \(i + 1).")
        }
        i += 1
        var s = ""
        while i < chars.count {
            let c = chars[i]
            i += 1
            if c == "\"" { return s }
            if c == "\\", i < chars.count {
                let e = chars[i]
                i += 1
                switch e {
                case "n": s.append("\n")
                case "t": s.append("\t")
                default: s.append(e)
                }
            } else {
                s.append(c)
            }
        }
        throw StoreError(.invalidArguments, "Alert strings: a string is not closed.")
    }
}
