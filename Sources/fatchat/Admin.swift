import ArgumentParser
import FatchatCore
import Foundation
import RecordStore

struct Admin: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The dashboard: record types, queries, subscriptions, index marks, checks.",
        subcommands: [Types.self, QueryRecords.self, ListSubscriptions.self, Index.self, Check.self, Reset.self, MigrateToLogs.self, MigrateToPostgres.self])

    struct Types: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "List record types, their counts and fields, and index marks.")
        @OptionGroup var global: GlobalOptions

        func execute() throws {
            let database = try global.openContainer(create: false).publicDatabase
            for summary in try database.recordTypes() {
                Output.line("\(summary.recordType) (\(summary.count) record\(summary.count == 1 ? "" : "s"))")
                let marks = try database.indexes(ofType: summary.recordType)
                for key in summary.fields.keys.sorted() {
                    var line = "  \(key): \(summary.fields[key] ?? "?")"
                    if let mark = marks[key] { line += "  [" + Admin.describe(mark) + "]" }
                    Output.line(line)
                }
            }
        }
    }

    static func describe(_ options: FieldIndexOptions) -> String {
        [(FieldIndexOptions.queryable, "queryable"), (.sortable, "sortable"), (.searchable, "searchable")]
            .filter { options.contains($0.0) }.map(\.1).joined(separator: ", ")
    }

    struct QueryRecords: ReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "query",
            abstract: "Query records with a CloudKit predicate, e.g. admin query Message 'text BEGINSWITH \"hi\"'.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The record type.") var type: String
        @Argument(help: "The predicate; TRUEPREDICATE for all.") var predicate = "TRUEPREDICATE"
        @Option(help: ArgumentHelp("Sort key, with :desc for descending (repeatable).", valueName: "KEY[:desc]")) var sort: [String] = []
        @Option(help: "At most this many records.") var limit = 20
        @Flag(help: "One JSON object per record.") var json = false

        func execute() throws {
            let database = try global.openContainer(create: false).publicDatabase
            let sorts = try sort.map { spec in
                let parts = spec.split(separator: ":", maxSplits: 1).map(String.init)
                return try QuerySortDescriptor(key: parts.first ?? spec, ascending: parts.count < 2 || parts[1].lowercased() != "desc")
            }
            let query = Query(recordType: type, predicate: try QueryPredicate(format: predicate), sortDescriptors: sorts)
            for record in try database.records(matching: query, resultsLimit: max(1, min(limit, RecordDatabase.maximumResultsLimit))).records {
                RecordPrinter.write(record, json: json)
            }
        }
    }

    struct ListSubscriptions: ReportingCommand {
        static let configuration = CommandConfiguration(commandName: "subscriptions", abstract: "List this user's subscriptions.")
        @OptionGroup var global: GlobalOptions

        func execute() throws {
            let database = try global.openContainer(create: false).publicDatabase
            for line in try SubscriptionListing.lines(database) { Output.line(line) }
        }
    }

    struct Index: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "Mark a field queryable, sortable and/or searchable; records saved before are indexed too.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The record type.") var type: String
        @Argument(help: "The field key.") var field: String
        @Flag var queryable = false
        @Flag var sortable = false
        @Flag var searchable = false
        @Flag(help: "Remove the field's marks.") var none = false

        func validate() throws {
            if !none, !queryable, !sortable, !searchable {
                throw ValidationError("Give --queryable, --sortable and/or --searchable (or --none to remove the marks).")
            }
        }

        func execute() throws {
            var options: FieldIndexOptions = []
            if queryable { options.insert(.queryable) }
            if sortable { options.insert(.sortable) }
            if searchable { options.insert(.searchable) }
            try global.openContainer(create: false).publicDatabase.setIndexes(options, forField: field, ofType: type)
            Output.line("\(type).\(field): \(options.isEmpty ? "no marks" : Admin.describe(options))")
        }
    }

    struct Check: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the public database: the file, its schema (planted triggers, views, tables, indexes), rows that do not decode, references and assets.")
        @OptionGroup var global: GlobalOptions

        func execute() throws {
            // Opening refuses a planted schema; the check reads the file by itself, so it can still say what is wrong.
            var container: Container?
            do {
                container = try global.openContainer(create: false)
            } catch let error as StoreError where error.code == .badDatabase {}
            let database = container?.publicDatabase
            // A log container has no shared file to check (one made by migration keeps only its backup);
            // on PostgreSQL the server's rows are checked (records, dangling references, assets).
            let engine = (try? ContainerSummary.read(try global.containerURL(), naming: .fatchat))?.engine
            var problems: [String] = switch engine {
            case .log: []
            case .postgresql: try database?.checkIntegrity() ?? []
            default: try RecordDatabase.checkPublicDatabase(inContainer: try global.containerURL(), naming: .fatchat)
            }
            if let database { problems += try OrphanCheck.problems(database) }
            if let container { problems += try SignatureCheckLines.problems(container) }
            if problems.isEmpty {
                Output.line("ok")
            } else {
                problems.forEach { Output.line($0) }
                throw ExitCode.failure
            }
        }
    }

    struct Reset: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "Erase every record, message and subscription of the public database (asks first).")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Do not ask for confirmation.") var yes = false

        func execute() throws {
            let container = try global.openContainer(create: false)
            if !yes {
                Output.ask("Erase everything in \(container.url.path)? Every client loses its history. Type 'yes' to go on: ")
                guard readLine()?.trimmingCharacters(in: .whitespaces).lowercased() == "yes" else {
                    Output.note("Nothing was erased.")
                    throw ExitCode.failure
                }
            }
            let bar = ProgressBar()
            defer { bar.end() }
            try container.publicDatabase.eraseAll { erased in
                bar.update(erased.fraction, "erased \(erased.done) of \(erased.total) rows")
            }
            bar.end()
            Output.line("Erased \(container.url.path).")
        }
    }
}
