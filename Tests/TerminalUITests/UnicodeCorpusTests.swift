import Foundation
import ProcessTestKit
import Testing

/// Unicode's own data files through the real client in tmux 3.3a, with tmux as the oracle:
/// every code point of every sample must reach tmux's screen, or its documented inert form
/// (see `DisplayWidth`), and the frame must keep its columns.
///
/// The samples come from Debian's `unicode-data` package: every sequence of `emoji-test.txt`,
/// every line of `GraphemeBreakTest.txt`, every 7th mark, every 29th other character and every
/// format character of `UnicodeData.txt`, both ends of each wide range of `EastAsianWidth.txt`,
/// the clusters the issue named, Zalgo text, and the C0 and C1 controls (in caret and hex form).
/// One message carries a batch of them, one per line.
@Suite(.startsProcesses, .serialized,
       .enabled(if: TmuxSession.available, "needs tmux"),
       .enabled(if: FileManager.default.fileExists(atPath: "/usr/share/unicode/UnicodeData.txt"),
                "needs Unicode's data files: apt-get install unicode-data (they go to /usr/share/unicode)"))
struct UnicodeCorpusTests {
    static let directory = "/usr/share/unicode"
    static let batchSize = 200
    static let width = 140
    static let height = batchSize + 12

    struct Sample {
        var id: Int
        var text: String
        var source: String
    }

    @Test(.timeLimit(.minutes(5)))
    func everyCodePointOfEverySampleReachesTheTerminal() async throws {
        let samples = Self.samples()
        #expect(samples.count > 5000)
        let root = URL(fileURLWithPath: "/tmp/fatchat-unicode-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let container = root.appendingPathComponent("chat").path
        let binary = try WorkerProcess.executable("fatchat").path
        _ = try spawn([binary, "init", container], capturing: false)
        try post("corpus start", binary: binary, container: container)

        let viewer = try TmuxSession(name: "fatchat-unicode-\(UUID().uuidString.prefix(6))", width: Self.width, height: Self.height,
                                     command: ["env", "LANG=C.UTF-8", "TERM=xterm-256color", binary, "--container", container, "--handle", "viewer"])
        defer { viewer.kill() }
        #expect(try await viewer.waitFor("corpus start"), "\(viewer.screen)")
        try viewer.press("F2")   // the member list: its border is drawn after each message row
        // The member after the list's border; a presence mark (● online) may come before the name.
        #expect(try await viewer.waitFor(anyOf: ["│zed", "│● zed", "│◐ zed", "│○ zed"]), "\(viewer.screen)")

        var lost: [String] = []
        var layout: [String] = []
        var seen = Set<Int>()
        for (number, start) in stride(from: 0, to: samples.count, by: Self.batchSize).enumerated() {
            let batch = samples[start..<min(samples.count, start + Self.batchSize)]
            let end = "end-of-batch-\(number)."
            let text = "batch \(number)\n" + batch.map { "\($0.text) @@\($0.id)@@" }.joined(separator: "\n") + "\n" + end
            try post(text, binary: binary, container: container)
            guard try await viewer.waitFor(end) else {
                Issue.record("batch \(number) never showed: \(viewer.screen)")
                break
            }
            let screen = try viewer.capture()
            layout += Self.layoutProblems(screen)
            for row in screen.split(separator: "\n", omittingEmptySubsequences: false) {
                guard let (id, region) = Self.sampleRegion(of: String(row)), id < samples.count else { continue }
                seen.insert(id)
                let sample = samples[id]
                if let missing = Self.firstMissing(sample.text, in: region) {
                    lost.append("\(sample.source) \(Self.hex(sample.text)): \(missing) missing from \(Self.hex(region))")
                }
            }
        }
        let unseen = samples.filter { !seen.contains($0.id) }
        lost += unseen.map { "\($0.source) \(Self.hex($0.text)): its line never showed" }
        let summary = "\(lost.count) of \(samples.count) samples lost code points; \(layout.count) rows broke the layout"
        print("UnicodeCorpusTests: \(summary)")
        #expect(lost.isEmpty, "\(summary). First ones:\n\(lost.prefix(25).joined(separator: "\n"))")
        #expect(layout.isEmpty, "\(summary). First ones:\n\(layout.prefix(10).joined(separator: "\n"))")
    }

    private func post(_ text: String, binary: String, container: String) throws {
        _ = try spawn([binary, "post", "--container", container, "--handle", "zed", "general", text], capturing: false)
    }

    // MARK: - Checking a screen

    /// The sample id of a row and the text between the channel list's border and the id.
    static func sampleRegion(of row: String) -> (Int, String)? {
        guard let marker = row.range(of: " @@"), let close = row[marker.upperBound...].range(of: "@@"),
              let id = Int(row[marker.upperBound..<close.lowerBound]),
              let border = row.firstIndex(of: "│"), border < marker.lowerBound else { return nil }
        return (id, String(row[row.index(after: border)..<marker.lowerBound]))
    }

    /// The first code point of `text` (or its documented inert form) not found, in order, in `region`.
    static func firstMissing(_ text: String, in region: String) -> String? {
        let shown = Array(region.unicodeScalars.map(\.value))
        var position = 0
        for token in expectedTokens(text) {
            guard let found = find(token, in: shown, from: position) else {
                return token.map { "U+" + String($0, radix: 16, uppercase: true) }.joined(separator: " ")
            }
            position = found
        }
        return nil
    }

    /// What each code point of a sample must show as, in order: itself, or its inert form.
    static func expectedTokens(_ text: String) -> [[UInt32]] {
        GlibcWidth.measure { wcwidth in
            var tokens: [[UInt32]] = []
            for scalar in text.unicodeScalars {
                let v = scalar.value
                switch v {
                case 0x200D, 0xFE0F, 0xE007F:
                    continue    // joiner, emoji selector and tag end are not drawn
                case 0x1F1E6...0x1F1FF:
                    tokens.append([0x41 + v - 0x1F1E6])    // a regional indicator as its letter
                case 0xE0020...0xE007E:
                    tokens.append([v - 0xE0000])            // a tag as its ASCII character
                case 0x09:
                    tokens.append([0x20, 0x20, 0x20, 0x20])  // the sanitizer's forms of controls
                case 0..<0x20:
                    tokens.append([0x5E, v + 0x40])
                case 0x7F:
                    tokens.append([0x5E, 0x3F])
                case 0x80..<0xA0:
                    tokens.append(Array("<\(String(v, radix: 16))>".unicodeScalars.map(\.value)))
                default:
                    let width = wcwidth(v)
                    if scalar.properties.generalCategory == .format, width == 0 { continue }   // removed by the sanitizer
                    if width < 0 {
                        tokens.append(Array("<\(String(v, radix: 16))>".unicodeScalars.map(\.value)))
                    } else {
                        tokens.append([v])
                    }
                }
            }
            return tokens
        }
    }

    /// The index after the first match of `token` in `shown` at or after `start`.
    static func find(_ token: [UInt32], in shown: [UInt32], from start: Int) -> Int? {
        guard !token.isEmpty, shown.count >= token.count else { return token.isEmpty ? start : nil }
        var index = start
        while index + token.count <= shown.count {
            if Array(shown[index..<index + token.count]) == token { return index + token.count }
            index += 1
        }
        return nil
    }

    /// Rows whose borders are not where the frame's are, as glibc (and so tmux) counts columns;
    /// the status line and the input line must be the last two rows.
    static func layoutProblems(_ screen: String) -> [String] {
        let rows = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var problems: [String] = []
        guard rows.count >= height else { return ["the screen has \(rows.count) rows, not \(height)"] }
        if !rows[height - 2].hasPrefix(" [viewer]") { problems.append("status line: \(rows[height - 2])") }
        if !rows[height - 1].hasPrefix("[#general]") { problems.append("input line: \(rows[height - 1])") }
        let columns = rows[1..<height - 2].map { borderColumns($0) }
        guard let frame = columns.first, frame.count == 2 else { return problems + ["no borders on row 1: \(rows[1])"] }
        for (offset, found) in columns.enumerated() where found != frame {
            problems.append("row \(offset + 1) has borders at \(found), not \(frame): \(rows[offset + 1])")
        }
        return problems
    }

    /// The columns of the `│` borders in a row, counting each code point at glibc's width.
    static func borderColumns(_ row: String) -> [Int] {
        GlibcWidth.measure { wcwidth in
            var column = 0
            var found: [Int] = []
            for scalar in row.unicodeScalars {
                if scalar == "│" { found.append(column) }
                column += max(0, wcwidth(scalar.value))
            }
            return found
        }
    }

    static func hex(_ text: String) -> String {
        text.unicodeScalars.map { String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
    }

    // MARK: - Samples

    /// The samples, in a fixed order with ids 0…n-1.
    static func samples() -> [Sample] {
        var texts: [(String, String)] = []
        let named = ["नमस्ते", "กำ", "தமிழ்", "తెలుగు క్ష్మ", "\u{600}1", "\u{890}2", "\u{8E2}3", "\u{110BD}\u{11083}",
                     "\u{FF65}\u{FF9F}", "\u{1100}\u{1100}\u{1161}", "\u{1161}", "\u{11A8}", "\u{301}x", "🇺🇸🇦🇩🇦🇪",
                     "\u{1AFF0}\u{1AFFE}", "\u{18D00}\u{18D08}", "\u{16FF0}\u{16FF1}"]
        texts += named.map { ($0, "issue") }
        // Zalgo text: more marks on one letter than a terminal cell holds.
        texts += [("Z" + String(repeating: "\u{336}\u{35B}\u{301}", count: 7) + "a\u{489}\u{489}", "zalgo")]
        // Every C0 control but NUL (no argument can hold it) and LF (it ends a line), DEL and
        // every C1 control, between letters.
        let controls = (UInt32(1)..<0x20).filter { $0 != 0x0A } + Array(UInt32(0x7F)..<0xA0)
        texts += controls.compactMap { Unicode.Scalar($0).map { ("a" + String(Character($0)) + "[2Jb", "controls") } }
        texts += emojiTest().map { ($0, "emoji-test") }
        texts += graphemeBreakTest().map { ($0, "GraphemeBreakTest") }
        texts += unicodeData().map { ($0, "UnicodeData") }
        texts += eastAsianWide().map { ($0, "EastAsianWidth") }
        return texts.enumerated().map { Sample(id: $0.offset, text: $0.element.0, source: $0.element.1) }
    }

    static func lines(_ file: String) -> [Substring] {
        guard let data = FileManager.default.contents(atPath: directory + "/" + file) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n")
    }

    static func scalars(_ hexes: some Sequence<Substring>) -> String? {
        var text = String.UnicodeScalarView()
        for hex in hexes {
            guard let v = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(v) else { return nil }
            // Controls have their own tests (the sanitizer's); here they would only end a line.
            // U+2502 is the frame's border, which the layout check looks for.
            if v < 0x20 || (0x7F..<0xA0).contains(v) || v == 0x2028 || v == 0x2029 || v == 0x2502 { return nil }
            text.append(scalar)
        }
        return text.isEmpty ? nil : String(text)
    }

    static func emojiTest() -> [String] {
        lines("emoji/emoji-test.txt").compactMap { line in
            guard !line.hasPrefix("#"), let semicolon = line.firstIndex(of: ";") else { return nil }
            return scalars(line[..<semicolon].split(separator: " "))
        }
    }

    static func graphemeBreakTest() -> [String] {
        lines("auxiliary/GraphemeBreakTest.txt").compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            let test = line.split(separator: "#").first ?? ""
            return scalars(test.split(whereSeparator: { " ÷×\t".contains($0) }))
        }
    }

    static func unicodeData() -> [String] {
        var result: [String] = []
        for (index, line) in lines("UnicodeData.txt").enumerated() {
            let fields = line.split(separator: ";", omittingEmptySubsequences: false)
            guard fields.count > 2 else { continue }
            let category = fields[2]
            let isMark = category.hasPrefix("M")
            let pick = category == "Cf" || (isMark ? index % 7 == 0 : index % 29 == 0) || fields[1].hasSuffix("First>")
                || fields[1].hasSuffix("Last>")
            guard pick, category != "Cc", category != "Cs", category != "Co", let text = scalars([fields[0]]) else { continue }
            // A format character between letters, as it comes in text; a mark alone, at the start of a line.
            result.append(category == "Cf" ? "a" + text + "b" : text)
        }
        return result
    }

    static func eastAsianWide() -> [String] {
        lines("EastAsianWidth.txt").compactMap { line in
            let fields = line.split(separator: "#").first?.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
            guard fields.count == 2, fields[1] == "W" || fields[1] == "F" else { return nil }
            let ends = fields[0].split(separator: ".", omittingEmptySubsequences: true)
            guard let first = ends.first, let last = ends.last else { return nil }
            return scalars(first == last ? [first] : [first, last])
        }
    }
}

/// glibc's own `wcwidth()`, in a UTF-8 locale of the calling thread only, for counting
/// columns as tmux does on this machine.
enum GlibcWidth {
    typealias WCWidth = @convention(c) (Int32) -> Int32

    static func measure<T>(_ body: ((UInt32) -> Int) -> T) -> T {
        guard let symbol = dlsym(nil, "wcwidth"), let utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", nil) else {
            return body { _ in 1 }
        }
        let wcwidth = unsafeBitCast(symbol, to: WCWidth.self)
        let previous = uselocale(utf8)
        defer { uselocale(previous); freelocale(utf8) }
        return body { Int(wcwidth(Int32(bitPattern: $0))) }
    }
}
