import Foundation

/// The options a FUSE daemon was started with, read from its command line in `/proc`.
///
/// sshfs keeps its cache settings (`cache=no`, `attr_timeout=…`) to itself:
/// the kernel's mountinfo does not show them. The daemon's own command line
/// does, when this process may read it (root, or the mount's owner).
public enum FuseDaemon {
    /// The `-o` options of the daemon named `program` (such as `sshfs`) serving `mountPoint`; nil when none is visible.
    public static func options(program: String, mountPoint: String) -> [String]? {
        for arguments in commandLines() {
            if let options = options(ofCommandLine: arguments, program: program, mountPoint: mountPoint) { return options }
        }
        return nil
    }

    /// The program name of a daemon among `candidates` whose command line names `mountPoint`; nil when none is visible.
    ///
    /// bindfs mounts as plain `fuse`, with no subtype in mountinfo; its daemon's name is the only sign of it.
    static func program(serving mountPoint: String, among candidates: Set<String>) -> String? {
        for arguments in commandLines() {
            guard let first = arguments.first, case let name = (first as NSString).lastPathComponent, candidates.contains(name),
                  arguments.dropFirst().contains(where: { $0 == mountPoint || $0 == mountPoint + "/" }) else { continue }
            return name
        }
        return nil
    }

    /// The command line of every process this one may see.
    private static func commandLines() -> [[String]] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        var lines: [[String]] = []
        for entry in entries where entry.allSatisfy(\.isNumber) {
            guard let handle = FileHandle(forReadingAtPath: "/proc/\(entry)/cmdline"),
                  let data = try? handle.read(upToCount: 64 * 1024) else { continue }
            try? handle.close()
            lines.append(data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) })
        }
        return lines
    }

    /// The `-o` options in one command line, if it is `program` serving `mountPoint`; nil otherwise.
    public static func options(ofCommandLine arguments: [String], program: String, mountPoint: String) -> [String]? {
        guard let first = arguments.first, (first as NSString).lastPathComponent == program,
              arguments.dropFirst().contains(where: { $0 == mountPoint || $0 == mountPoint + "/" }) else { return nil }
        var options: [String] = []
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "-o", index + 1 < arguments.count {
                options += arguments[index + 1].split(separator: ",").map(String.init)
                index += 2
                continue
            }
            if argument.hasPrefix("-o"), argument.count > 2 {
                options += argument.dropFirst(2).split(separator: ",").map(String.init)
            } else if argument.hasPrefix("--"), argument.count > 2 {
                // glusterfs spells its options as --attribute-timeout=0.
                options.append(String(argument.dropFirst(2)))
            }
            index += 1
        }
        return options
    }
}
