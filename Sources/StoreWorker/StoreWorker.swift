import ArgumentParser

/// A test and diagnostic tool: drives one RecordStore container from a process of its own.
///
/// The multi-process tests start many of these at once. Each prints a record's
/// name only after the save returned, so whatever a killed worker printed is
/// what it had been told was saved.
@main
struct StoreWorker: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store-worker",
        abstract: "Save, check, modify and delete records in a RecordStore container, from a process of its own.",
        discussion: """
            Exit codes: 0 success, 1 a store error, 64 bad usage, 75 the database stayed busy \
            or unavailable (try again), 77 permission denied (permissionFailure, or EACCES for probe-read).
            """,
        subcommands: [Save.self, Check.self, Modify.self, Delete.self, Info.self, ProbeRead.self]
    )
}
