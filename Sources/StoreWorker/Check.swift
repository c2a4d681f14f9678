import ArgumentParser
import Foundation
import RecordStore

/// `check`: what records of a type are there, and whether the change log created any of them twice.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print, as JSON, the records of a type that exist and the names the change log created more than once.")

    @OptionGroup var target: ContainerOptions

    @Option(name: .long, help: "The record type.")
    var type: String = "Item"

    /// What `check` prints.
    struct Report: Codable {
        /// Names of the records of the type that exist now, sorted.
        var present: [String]
        /// How many `created` entries the change log holds for the type.
        var createdEntries: Int
        /// Names with more than one `created` entry.
        var duplicated: [String]
    }

    func run() throws {
        try WorkerExit.reporting {
            let (_, database) = try target.open()
            var present: Set<String> = []
            var created: [String: Int] = [:]
            var token: ChangeToken?
            repeat {
                let batch = try database.fetchChanges(since: token, limit: 400)
                for change in batch.changes where change.recordType == type && change.kind == .created {
                    created[change.recordID.recordName, default: 0] += 1
                }
                for record in batch.changedRecords where record.recordType == type {
                    present.insert(record.recordID.recordName)
                }
                for deleted in batch.deletedRecords {
                    present.remove(deleted.recordID.recordName)
                }
                token = batch.token
                if !batch.moreComing { break }
            } while true
            // The feed says what exists; fetching each one checks the records themselves are readable.
            let names = present.sorted()
            for chunk in stride(from: 0, to: names.count, by: 400) {
                let ids = names[chunk..<min(chunk + 400, names.count)].map { RecordID(recordName: $0) }
                for (id, result) in try database.records(for: ids) {
                    if case .failure = result { present.remove(id.recordName) }
                }
            }
            try WorkerOutput.json(Report(present: present.sorted(),
                                         createdEntries: created.values.reduce(0, +),
                                         duplicated: created.filter { $0.value > 1 }.keys.sorted()))
        }
    }
}
