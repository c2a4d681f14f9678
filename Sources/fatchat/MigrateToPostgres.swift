import ArgumentParser
import FatchatCore
import Foundation
import RecordStore

extension Admin {
    /// `fatchat admin migrate DIR --to URL`: a `sqlite` or `log` container's public database moves to PostgreSQL, every record kept as it was.
    struct MigrateToPostgres: ReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "migrate",
            abstract: "Copy a sqlite or log container's public database to an empty PostgreSQL database and switch the container to it.",
            discussion: """
                Stop every client first. Records keep their names, creators, dates and change tags; references, assets, \
                public keys and subscriptions go along, so signed messages still verify. Run it as the role that owns the \
                schema fatchat there (it makes the schema when there is none), since only that role may write rows in \
                other members' names. The copy is one transaction, so a run cut short changes nothing on the server, and \
                running it again is safe; a database that holds anything else is refused. container.json names the server \
                last; a sqlite container's old file is kept as public.sqlite.migrated.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The container directory.") var directory: String
        @Option(name: .customLong("to"), help: ArgumentHelp("The PostgreSQL database to copy into (postgresql://HOST/DATABASE, or postgresql:///DATABASE?host=/run/postgresql for its socket), with no password in it.", valueName: "URL"))
        var server: String

        func execute() throws {
            let url = URL(fileURLWithPath: directory)
            let bar = ProgressBar()
            let result = try Container.migrateToPostgres(at: url, to: server, naming: .fatchat, progress: { note in
                bar.end()
                Output.note(note)
            }, copied: { done, total in
                bar.update(Double(done) / Double(max(total, 1)), "copied \(done) of \(total) records")
            })
            bar.end()
            let total = result.records.values.reduce(0, +)
            Output.line("Migrated \(url.path) to PostgreSQL: \(total) record\(total == 1 ? "" : "s") from \(result.records.count) account\(result.records.count == 1 ? "" : "s"), \(result.keys) key\(result.keys == 1 ? "" : "s"), \(result.subscriptions) subscription\(result.subscriptions == 1 ? "" : "s").")
            if result.skipped > 0 {
                Output.note("\(result.skipped) damaged row\(result.skipped == 1 ? "" : "s") could not be migrated; the old public database keeps them (fatchat admin check lists them).")
            }
        }
    }
}
