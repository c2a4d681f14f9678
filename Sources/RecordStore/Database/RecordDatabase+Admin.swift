import Foundation

/// How far `eraseAll` has come: rows of records, their search text and changes removed, of how many.
public struct ErasureProgress: Sendable, Equatable {
    public var done: Int
    public var total: Int

    /// The share done, 0…1; 1 when there was nothing to remove.
    public var fraction: Double { total == 0 ? 1 : Double(done) / Double(total) }
}

/// A record type as the database holds it: how many records, and the type of each field seen.
public struct RecordTypeSummary: Sendable, Equatable {
    public var recordType: String
    public var count: Int
    /// Field key → type name, such as `String` or `List<Reference>`.
    public var fields: [String: String]
}

extension RecordDatabase {
    /// Every record type with its fields, for the dashboard. Reads every record: not for hot paths.
    public func recordTypes() throws -> [RecordTypeSummary] {
        try storage.read { try $0.recordTypeSummary() }
    }

    /// Checks the file, its schema, its rows and the store's own invariants; returns the problems found.
    public func checkIntegrity() throws -> [String] {
        try storage.read { try $0.integrityProblems() }
    }

    /// Checks the public database of the container at `url` by reading it only: no migration, no write.
    ///
    /// Lists what `checkIntegrity` lists, for a file that opening refuses too
    /// (one with a planted trigger, say), so a check command can name it; `naming` words the problems.
    public static func checkPublicDatabase(inContainer url: URL, naming: ContainerNaming = ContainerNaming()) throws -> [String] {
        try SQLiteStorage.inspect(path: url.appendingPathComponent("public.sqlite").path,
                                  assetsDirectory: url.appendingPathComponent("assets", isDirectory: true), naming: naming)
    }

    /// Removes every record, change and subscription, and the asset files. Change tokens expire.
    ///
    /// It is one transaction, all or nothing; `progress` hears how many rows are gone after each batch.
    public func eraseAll(progress: (ErasureProgress) -> Void = { _ in }) throws {
        try storage.write { writer in
            let hashes = try writer.eraseAll(progress: progress)
            try assets.collect(hashes, using: writer)
        }
    }
}
