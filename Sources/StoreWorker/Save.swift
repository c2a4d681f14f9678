import ArgumentParser
import Foundation
import RecordStore

/// `save`: saves records named `PREFIX-START` … in commits of `--batch`, printing each name once its commit returned.
struct Save: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Save records PREFIX-START … PREFIX-(START+COUNT-1), printing each name after its save returned.")

    @OptionGroup var target: ContainerOptions

    @Option(name: .long, help: "How many records to save.")
    var count: Int

    @Option(name: .long, help: "Record names are PREFIX-<index>.")
    var prefix: String

    @Option(name: .long, help: "The first index.")
    var start: Int = 0

    @Option(name: .long, help: "Records per commit (at most 400).")
    var batch: Int = 1

    @Option(name: .long, help: "The record type.")
    var type: String = "Item"

    func validate() throws {
        guard count >= 0 else { throw ValidationError("--count must be 0 or more.") }
        guard start >= 0 else { throw ValidationError("--start must be 0 or more.") }
        guard (1...RecordDatabase.maximumBatchSize).contains(batch) else {
            throw ValidationError("--batch must be between 1 and \(RecordDatabase.maximumBatchSize).")
        }
        guard !prefix.isEmpty else { throw ValidationError("--prefix must not be empty.") }
    }

    func run() throws {
        try WorkerExit.reporting {
            let (_, database) = try target.open()
            let began = Date()
            var index = start
            let end = start + count
            while index < end {
                let records = (index..<min(index + batch, end)).map { makeRecord($0) }
                if records.count == 1, let record = records.first {
                    try database.save(record)
                } else {
                    let result = try database.modifyRecords(saving: records, deleting: [])
                    for record in records {
                        guard let outcome = result.saveResults[record.recordID] else {
                            throw StoreError(.internalError, "Saving \(record.recordID) gave no result.")
                        }
                        _ = try outcome.get()
                    }
                }
                for record in records { WorkerOutput.line(record.recordID.recordName) }
                index += records.count
            }
            let seconds = Date().timeIntervalSince(began)
            WorkerOutput.error(String(format: "saved %d records in %.2f s (%.0f records/s)", count, seconds,
                                      seconds > 0 ? Double(count) / seconds : 0))
        }
    }

    private func makeRecord(_ index: Int) -> Record {
        var record = Record(recordType: type, recordID: RecordID(recordName: "\(prefix)-\(index)"))
        record["writer"] = .string(prefix)
        record["index"] = .int64(Int64(index))
        record["pid"] = .int64(Int64(getpid()))
        return record
    }
}
