import ArgumentParser
import FatchatCore
import Foundation
import RecordStore

extension Admin {
    /// `fatchat admin migrate-to-logs DIR`: a single-file container becomes a log container, every record kept with its creator.
    struct MigrateToLogs: ReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "migrate-to-logs",
            abstract: "Turn a single-file (sqlite engine) container into a log-engine container, losing nothing.",
            discussion: """
                Stop every client first. Each record goes into a log owned by its creator's account, so run this as root \
                when others have posted. container.json switches to the log engine last; the old file is kept as \
                public.sqlite.migrated. Each account's subscriptions go into its log folder, and each of its clients \
                takes them into its own cache the first time it runs. If it is cut short the container works as before, and running it again is safe. \
                Messages still queued in anyone's outbox go out through the log engine the next time they run Fatchat.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The container directory.") var directory: String

        func execute() throws {
            let url = URL(fileURLWithPath: directory)
            let bar = ProgressBar()
            let result = try Container.migrateToLogs(at: url, naming: .fatchat, progress: { note in
                bar.end()
                Output.note(note)
            }, written: { _, done, total in
                bar.update(Double(done) / Double(max(total, 1)), "wrote \(done) of \(total) records into their creators' logs")
            })
            bar.end()
            let total = result.records.values.reduce(0, +)
            Output.line("Migrated \(url.path) to the log engine: \(total) record\(total == 1 ? "" : "s") from \(result.records.count) account\(result.records.count == 1 ? "" : "s"), and \(result.subscriptions) subscription\(result.subscriptions == 1 ? "" : "s").")
            if result.skipped > 0 {
                Output.note("\(result.skipped) damaged row\(result.skipped == 1 ? "" : "s") could not be migrated; the backup keeps them (fatchat admin check lists them).")
            }
        }
    }
}
