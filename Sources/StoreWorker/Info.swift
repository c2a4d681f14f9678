import ArgumentParser
import Foundation
import RecordStore

/// `info`: opens (or creates) a container and prints what identifies it.
struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open or create a container and print, as JSON, its identifier, mode and the current user.")

    @OptionGroup var target: ContainerOptions

    /// What `info` prints.
    struct Report: Codable {
        var identifier: String
        var mode: String
        var detectedMode: String
        var userRecordName: String
    }

    func run() throws {
        try WorkerExit.reporting {
            let (container, _) = try target.open()
            try WorkerOutput.json(Report(
                identifier: container.identifier, mode: container.mode.rawValue,
                detectedMode: JournalMode.detect(for: container.url).rawValue,
                userRecordName: container.currentUserRecordID.recordName))
        }
    }
}

/// `probe-read`: tries to open a file for reading, as whoever runs this, and reports the outcome.
struct ProbeRead: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe-read",
        abstract: "Try open(2) for reading; print `ok` or the errno name. Exit 0, 77 on EACCES/EPERM, 1 otherwise.")

    @Argument(help: "The file to open.")
    var path: String

    func run() throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd >= 0 {
            close(fd)
            WorkerOutput.line("ok")
            return
        }
        let code = errno
        switch code {
        case EACCES: WorkerOutput.line("EACCES")
        case EPERM: WorkerOutput.line("EPERM")
        case ENOENT: WorkerOutput.line("ENOENT")
        default: WorkerOutput.line("errno \(code)")
        }
        throw (code == EACCES || code == EPERM) ? WorkerExit.permissionDenied : WorkerExit.storeError
    }
}
