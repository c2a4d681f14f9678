import FatchatCore
import Foundation
import RecordStore

/// The `admin check` lines about records of the public database that their creator's key does not vouch for.
enum SignatureCheckLines {
    /// The most records listed one per line; past it, one line counts the rest (a container from before signatures has nothing signed).
    static let listed = 1000

    /// One line per unsigned or badly signed record, every type, a page at a time.
    static func problems(_ container: Container) throws -> [String] {
        guard let keys = container.accountKeys else { return [] }
        let database = container.publicDatabase
        var lines: [String] = []
        var more = 0
        for type in try database.recordTypes().map(\.recordType) {
            // A type no save would accept was planted by hand; the integrity check reports its rows already.
            guard var page = try? database.records(matching: Query(recordType: type), resultsLimit: 200) else { continue }
            while true {
                for record in page.records {
                    let check = keys.check(record)
                    guard !check.isVerified else { continue }
                    guard lines.count < listed else {
                        more += 1
                        continue
                    }
                    let creator = record.creatorUserRecordID?.recordName ?? "nobody"
                    lines.append(Sanitizer.inert("record \(record.recordID.recordName) (\(type)) claims to be by \(creator) but is not verified: \(check.description)"))
                }
                guard let cursor = page.cursor else { break }
                page = try database.records(continuing: cursor, resultsLimit: 200)
            }
        }
        if more > 0 { lines.append("\(more) more records are not verified") }
        return lines
    }
}
