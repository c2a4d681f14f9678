import ArgumentParser
import Foundation
import RecordStore

/// `modify`: fetches a record, changes one string field, and saves it back.
struct Modify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set a string field on an existing record (exit 77 on permissionFailure).")

    @OptionGroup var target: ContainerOptions

    @Option(name: .long, help: "The record name.")
    var name: String

    @Option(name: .long, help: "The field to set.")
    var key: String = "note"

    @Option(name: .long, help: "The value to set.")
    var value: String

    func run() throws {
        try WorkerExit.reporting {
            let (_, database) = try target.open()
            var record = try database.record(for: RecordID(recordName: name))
            record[key] = .string(value)
            let saved = try database.save(record)
            WorkerOutput.line(saved.recordID.recordName)
        }
    }
}

/// `delete`: deletes a record.
struct Delete: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete a record (exit 77 on permissionFailure).")

    @OptionGroup var target: ContainerOptions

    @Option(name: .long, help: "The record name.")
    var name: String

    func run() throws {
        try WorkerExit.reporting {
            let (_, database) = try target.open()
            try database.deleteRecord(withID: RecordID(recordName: name))
            WorkerOutput.line(name)
        }
    }
}
