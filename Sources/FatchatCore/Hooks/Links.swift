import Foundation

/// Links in messages, for `/open`: found in text, and checked before anything is started with them,
/// as the text comes from someone else.
public enum Links {
    /// The longest link `/open` starts a browser with.
    public static let maximumLength = 2048
    static let schemes = ["http://", "https://", "mailto:"]

    /// The links in `text`, in order: words that start with `http://`, `https://` or `mailto:`,
    /// without the punctuation that usually ends a sentence or wraps a link (`.,;:!?)]>'"`).
    public static func find(in text: String) -> [String] {
        var found: [String] = []
        for word in text.split(whereSeparator: { $0.isWhitespace || $0 == "<" || $0 == ">" || $0 == "\"" }) {
            var candidate = Substring(word)
            if let start = schemes.compactMap({ candidate.range(of: $0, options: .caseInsensitive)?.lowerBound }).min() {
                candidate = candidate[start...]
            } else {
                continue
            }
            while let last = candidate.last, ".,;:!?)]}'\"".contains(last) {
                // A closing bracket that the link opened stays (Wikipedia's `Foo_(bar)`).
                if last == ")", candidate.filter({ $0 == "(" }).count >= candidate.filter({ $0 == ")" }).count { break }
                candidate = candidate.dropLast()
            }
            if (try? check(String(candidate))) != nil { found.append(String(candidate)) }
        }
        return found
    }

    /// `link` as it may be handed to a browser, or why not: http, https or mailto only, with
    /// something after the scheme, no spaces or control characters, at most ``maximumLength``
    /// bytes, and never starting with `-` (which a program would read as an option).
    public static func check(_ link: String) throws(CommandError) -> String {
        guard !link.hasPrefix("-") else { throw CommandError("That link starts with '-'; it is not opened.") }
        guard link.utf8.count <= maximumLength else { throw CommandError("That link is longer than \(maximumLength) bytes; it is not opened.") }
        guard link.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !(0x80..<0xA0).contains($0.value)
            && !$0.properties.isWhitespace && !Sanitizer.isBidiControl($0.value) }) else {
            throw CommandError("That link holds spaces or control characters; it is not opened.")
        }
        let lower = link.lowercased()
        guard let scheme = schemes.first(where: { lower.hasPrefix($0) }), link.count > scheme.count else {
            throw CommandError("Only http, https and mailto links are opened.")
        }
        if scheme != "mailto:" {
            guard let url = URL(string: link), let host = url.host, !host.isEmpty else {
                throw CommandError("That link has no host; it is not opened.")
            }
        }
        return link
    }

    /// The program that opens links: `$BROWSER` (its first entry, as a colon-separated list allows), else `xdg-open`.
    public static func browser(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let first = (environment["BROWSER"] ?? "").split(separator: ":").first.map(String.init) ?? ""
        return first.trimmingCharacters(in: .whitespaces).isEmpty ? "xdg-open" : first
    }
}
