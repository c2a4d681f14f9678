import ArgumentParser
import FatchatCore
import Foundation
import RecordStore

/// `fatchat doctor [DIR]`: which filesystem and engine a container has, and what in that setup to fix.
struct Doctor: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say which filesystem and engine a container has, and warn about setups known to lose or delay messages.",
        discussion: """
            Prints the filesystem (with its FUSE subtype and mount options), the engine, the journal mode and, for a \
            log container, how many clients have written. Each warning says what to run or how to remount. \
            Exit codes: 0 nothing to fix; 2 warnings were printed; 1 the container could not be read.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The container directory (default: --container, $FATCHAT_CONTAINER, else the embedded default).")
    var directory: String?

    func execute() throws {
        let url = try directory.map { URL(fileURLWithPath: $0) } ?? global.containerURL()
        let summary = try ContainerSummary.read(url, naming: .fatchat)
        let filesystem = Filesystem.detect(for: url)
        var daemonOptions: [String]?
        if let mount = filesystem.mount, mount.type.hasPrefix("fuse.") {
            daemonOptions = FuseDaemon.options(program: String(mount.type.dropFirst(5)), mountPoint: mount.mountPoint)
        }
        let report = ContainerDoctor.examine(summary, on: filesystem, daemonOptions: daemonOptions)
        report.facts.forEach(Output.line)
        report.notes.forEach { Output.line("note: " + $0) }
        report.warnings.forEach { Output.line("warning: " + $0) }
        guard report.warnings.isEmpty else { throw ExitCode(2) }
        Output.line("ok: nothing to fix")
    }
}
