import Foundation
import Testing

/// ARCHITECTURE.md gives one line for each source file. A file added, moved or
/// removed without its line makes the map lie, so the map is checked against the tree.
@Suite struct CodeMapTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let mapped = ["Sources", "Tests/ProcessTestKit", "scripts"]

    @Test func everySourceFileHasOneLineAndEveryLineAFile() throws {
        let map = try String(contentsOf: Self.root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let named = Self.namedPaths(in: map)
        let files = Self.sourceFiles()
        #expect(files.count > 100, "found \(files.count) source files")
        let missing = files.subtracting(named.keys).sorted()
        let stale = named.keys.filter { !FileManager.default.fileExists(atPath: Self.root.appendingPathComponent($0).path) }.sorted()
        let repeated = named.filter { $0.value > 1 }.keys.sorted()
        #expect(missing.isEmpty, "not in ARCHITECTURE.md: \(missing)")
        #expect(stale.isEmpty, "in ARCHITECTURE.md but not in the tree: \(stale)")
        #expect(repeated.isEmpty, "given more than one line: \(repeated)")
    }

    /// Paths in the map's list lines, "- `path`: what it holds", with how often each appears.
    static func namedPaths(in map: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in map.split(separator: "\n") where line.hasPrefix("- `") {
            let rest = line.dropFirst(3)
            guard let end = rest.firstIndex(of: "`") else { continue }
            let path = String(rest[..<end])
            if mapped.contains(where: { path.hasPrefix($0 + "/") }), !path.hasSuffix("/") { counts[path, default: 0] += 1 }
        }
        return counts
    }

    static func sourceFiles() -> Set<String> {
        var files: Set<String> = []
        for folder in mapped {
            let base = root.appendingPathComponent(folder)
            guard let walk = FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey]) else { continue }
            for case let file as URL in walk where (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                files.insert(folder + "/" + file.path.dropFirst(base.path.count + 1))
            }
        }
        return files
    }
}
