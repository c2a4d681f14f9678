import Foundation
import GRDB

/// The decoders of untrusted stored data, reached from the fuzz targets (`Sources/FatchatFuzz`) and nothing else.
///
/// Each entry calls the code a real read runs, so a trap found here is a trap
/// that a hostile row in a shared database can cause.
@_spi(Fuzzing) public enum FuzzEntryPoints {
    /// Decodes `text` as the `fields` column of a record (or the `previous` column of a change); returns the field count.
    public static func decodeStoredFields(_ text: String) throws -> Int {
        try FieldCoding.decode(text, zone: .default, assetsDirectory: assets).count
    }

    /// An in-memory database with RecordStore's current schema and SQL functions, for a fuzz target to fill with hostile rows.
    public static func makeDatabase() throws -> DatabaseQueue {
        var config = Configuration()
        config.prepareDatabase { db in SQLFunctions.register(db) }
        let queue = try DatabaseQueue(configuration: config)
        try Schema.migrator.migrate(queue)
        return queue
    }

    /// Reads up to `limit` change-log entries of `db` through the storage's `changes(after:zone:limit:)`; returns how many decoded.
    public static func readChanges(in db: Database, limit: Int) throws -> Int {
        try SQLiteAccess(db: db, assets: assets, naming: ContainerNaming()).changes(after: 0, zone: nil, limit: limit).rows.count
    }

    /// Runs `query` on `db` through the storage's `records(matching:)`, as a query or subscription would; returns how many records matched.
    public static func runQuery(_ query: Query, in db: Database, limit: Int) throws -> Int {
        let request = QueryRequest(query: query, zone: nil, desiredKeys: nil, after: nil, limit: limit)
        return try SQLiteAccess(db: db, assets: assets, naming: ContainerNaming()).records(matching: request).count
    }

    /// Never read: decoding only names asset files, it does not open them.
    private static let assets = URL(fileURLWithPath: "/nonexistent/fatchat-fuzz-assets")
}
