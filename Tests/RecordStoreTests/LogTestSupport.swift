import Foundation
@testable import RecordStore

/// Entries and log files for the log engine's tests, written with the engine's own format.
enum LogFixture {
    static let alice = "_1001_alice"
    static let bob = "_1002_bob"

    /// A save entry whose fields are given as stored JSON.
    static func save(_ name: String, by account: String, client: UUID, at time: UInt64, type: String = "Note",
                     fields: [String: FieldValue] = [:]) throws -> LogEntry {
        let saved = LogEntry.Saved(recordType: type, fields: try FieldCoding.encode(fields), created: 1_000, modified: 1_000 + Double(time % 1_000_000),
                                   changeTag: "t\(time)")
        return LogEntry(account: account, client: client, time: HybridTime(rawValue: time), recordID: RecordID(recordName: name), change: .save(saved))
    }

    static func delete(_ name: String, by account: String, client: UUID, at time: UInt64) -> LogEntry {
        LogEntry(account: account, client: client, time: HybridTime(rawValue: time), recordID: RecordID(recordName: name), change: .delete)
    }

    /// The bytes of a whole log: header, then each entry framed.
    static func bytes(header: LogHeader, entries: [LogEntry]) throws -> [UInt8] {
        var bytes = LogFormat.encode(header)
        for entry in entries { try LogFormat.encode(entry, into: &bytes) }
        return bytes
    }

    /// Writes `bytes` as a new file (replacing one that is there) and opens it for reading.
    static func file(_ url: URL, _ bytes: [UInt8]) throws -> Int32 {
        try Data(bytes).write(to: url)
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError(.internalError, "cannot open \(url.path)") }
        return fd
    }

    /// A log file read from its header to its end, as a new reader reads it; nil if its header does not read.
    static func readBack(_ path: String) -> (header: LogHeader, scan: LogFileReader.Scan)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard case .success(let (header, size)) = LogFileReader.header(of: fd) else { return nil }
        return (header, LogFileReader.scan(fd, from: Int64(size)))
    }

    static func append(_ url: URL, _ bytes: [UInt8]) throws {
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(bytes))
    }

    /// A fresh cache database, as the log engine keeps one, in `directory`.
    static func cache(in directory: TemporaryDirectory, name: String = "cache.sqlite") throws -> SQLiteStorage {
        let handle = try DirectoryHandle(path: directory.url.path, naming: ContainerNaming())
        try DatabaseFile.create(name, in: handle, mode: 0o600, group: nil)
        return try SQLiteStorage(path: directory.path(name).path, assetsDirectory: directory.path("assets"), mode: .local, naming: ContainerNaming())
    }

    /// Keeps and applies entries in one transaction, as a poll does.
    static func apply(_ entries: [LogEntry], to cache: SQLiteStorage) throws {
        try cache.write { writer in
            guard let access = writer as? SQLiteAccess else { throw StoreError(.internalError, "not SQLite") }
            // As a poll: a record first seen here settles from memory, one seen before from its stored history.
            let replay = LogReplay(access, polling: true)
            var touched: [RecordID] = []
            for entry in entries where try replay.remember(entry) && !touched.contains(entry.recordID) { touched.append(entry.recordID) }
            try replay.settle(touched, historyLimit: 100_000)
        }
    }

    /// Every record in the cache as comparable text: name, type, creator, tag and stored fields.
    static func snapshot(_ cache: SQLiteStorage) throws -> [String] {
        try cache.read { reader in
            try reader.recordIDs(inZone: ZoneID.defaultZoneName).sorted { $0.recordName < $1.recordName }.map { id in
                guard let record = try reader.record(id, keys: nil) else { return "\(id.recordName) vanished" }
                return "\(id.recordName) \(record.recordType) \(record.creatorUserRecordID?.recordName ?? "-") \(record.recordChangeTag ?? "-") \(try FieldCoding.encode(record.fields))"
            }
        }
    }

    /// How many kept entries the rules ignored.
    static func ignoredCount(_ cache: SQLiteStorage) throws -> Int {
        try cache.read { reader in
            guard let access = reader as? SQLiteAccess else { return -1 }
            return try Int.fetchOne(access.db, sql: "SELECT count(*) FROM log_entry WHERE ignored = 1") ?? -1
        }
    }
}
