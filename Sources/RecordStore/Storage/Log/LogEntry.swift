import Foundation

/// One change a client appended to its log: who, when, which record, and what became of it.
struct LogEntry: Hashable, Sendable {
    /// A record as its creator's client stored it: the columns of the `record` table that the entry carries.
    struct Saved: Hashable, Sendable {
        var recordType: String
        /// The fields in their stored encoding (`FieldCoding`), so that every client stores the same text.
        var fields: String
        var created: Double
        var modified: Double
        var changeTag: String
    }

    enum Change: Hashable, Sendable {
        case save(Saved)
        case delete
    }

    /// The creator: the user record name of the OS account that wrote the entry (`_<uid>_<name>`).
    var account: String
    var client: UUID
    var time: HybridTime
    var recordID: RecordID
    var change: Change

    /// The order of one record's entries: the clock, then the client ID.
    var stamp: LogStamp { LogStamp(time: time, client: client) }
}

/// Where an entry falls among one record's entries, the same on every client.
struct LogStamp: Hashable, Comparable, Sendable {
    var time: HybridTime
    var client: UUID

    static func < (lhs: LogStamp, rhs: LogStamp) -> Bool {
        if lhs.time != rhs.time { return lhs.time < rhs.time }
        return lhs.client.uuidString < rhs.client.uuidString
    }
}

/// The first bytes of a log file: which client writes it, for which account.
struct LogHeader: Hashable, Sendable {
    var client: UUID
    var account: String
    /// Goes up by one each time the writer compacts its log into a new file.
    var generation: UInt64
}
