import Foundation
import ProcessTestKit
import Testing

/// The module picture in DESIGN.md holds only if every `import` is a dependency that
/// Package.swift declares: SwiftPM on Linux lets a target import any module built
/// before it, so an undeclared import compiles and the layering rots unseen.
@Suite struct ModuleImportTests {
    /// Modules that come with the toolchain, not from Package.swift.
    static let toolchain: Set<String> = [
        "Foundation", "FoundationEssentials", "Glibc", "Musl", "Dispatch", "Synchronization", "Testing", "XCTest",
    ]
    /// Front ends see the chat through FatchatCore only (DESIGN.md, "Modules").
    static let allowedOnly: [String: Set<String>] = ["TerminalUI": ["CNCurses", "FatchatCore"]]

    @Test func everyImportIsDeclared() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let targets = try Self.declaredTargets(packageRoot: root)
        #expect(targets.count > 10, "dump-package listed \(targets.count) targets")
        var undeclared: [String] = []
        for target in targets {
            let imports = try Self.imports(under: root.appendingPathComponent(target.path))
            for module in imports.subtracting(Self.toolchain).subtracting(target.dependencies).sorted() {
                undeclared.append("\(target.name) imports \(module)")
            }
            if let allowed = Self.allowedOnly[target.name] {
                for module in target.dependencies.subtracting(allowed).sorted() {
                    undeclared.append("\(target.name) depends on \(module); it may depend on \(allowed.sorted()) only")
                }
            }
        }
        #expect(undeclared.isEmpty, "\(undeclared.joined(separator: "\n"))")
    }

    struct Target {
        let name: String
        let path: String
        let dependencies: Set<String>
    }

    /// The manifest as SwiftPM reads it, with a scratch path of its own so that it
    /// never waits for the lock of the build that runs these tests.
    static func declaredTargets(packageRoot: URL) throws -> [Target] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("dump-package-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let json = try spawn(
            ["/usr/bin/env", "swift", "package", "--package-path", packageRoot.path, "--scratch-path", scratch.path, "dump-package"],
            capturing: true
        )
        guard let manifest = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let targets = manifest["targets"] as? [[String: Any]]
        else { throw ManifestError(output: json) }
        return targets.compactMap { target in
            guard let name = target["name"] as? String, let type = target["type"] as? String else { return nil }
            let folder = type == "test" ? "Tests" : "Sources"
            let path = (target["path"] as? String) ?? "\(folder)/\(name)"
            let dependencies = (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency in
                dependency.values.compactMap { ($0 as? [Any])?.first as? String }.first
            }
            return Target(name: name, path: path, dependencies: Set(dependencies))
        }
    }

    /// Module names after `import` (with any attributes or kind before them) in the Swift files below `folder`.
    static func imports(under folder: URL) throws -> Set<String> {
        let kinds: Set<String> = ["struct", "class", "enum", "protocol", "func", "var", "let", "typealias"]
        var modules: Set<String> = []
        guard let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return modules }
        for case let file as URL in files where file.pathExtension == "swift" {
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                let words = line.split(separator: " ").filter { !$0.hasPrefix("@") }
                guard words.first == "import", words.count >= 2 else { continue }
                let name = words.count >= 3 && kinds.contains(String(words[1])) ? words[2] : words[1]
                modules.insert(String(name.split(separator: ".").first ?? name))
            }
        }
        return modules
    }

    struct ManifestError: Error, CustomStringConvertible {
        let output: String
        var description: String { "swift package dump-package gave no manifest: \(output.prefix(300))" }
    }
}
