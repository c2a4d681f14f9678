import Foundation
import GRDB
@_spi(Fuzzing) import RecordStore

/// A predicate as a user types it (`/search`, `admin query`, a subscription), with its arguments.
///
/// Input: the format, then each argument after a US, spelled as
/// `PredicateArgumentInput` reads it. A predicate that parses is evaluated
/// in memory against sample records, and run as SQL, through the storage's
/// `records(matching:)`, over the same records in an in-memory database.
enum PredicateTarget {
    /// `Message` has a searchable `text` (token search goes through FTS5); `Note` has no marks (token search scans).
    private static let recordTypes = ["Message", "Note"]

    private static let samples: [RecordStore.Record] = {
        let zone = ZoneID.default
        let fields: [String: FieldValue] = [
            "text": .string("Héllo wörld, fuzz"), "n": .int64(42), "ratio": .double(-2.5),
            "when": .date(Date(timeIntervalSince1970: 1_700_000_000)),
            "place": .location(Location(latitude: 48.85, longitude: 2.35)),
            "parent": .reference(Reference(recordID: RecordID(recordName: "m0", zoneID: zone))),
            "tags": .list([.string("a"), .string("b")]), "nums": .list([.int64(1), .int64(-1)]),
            "blob": .bytes(Data([0, 1, 2])),
        ]
        return recordTypes.map { RecordStore.Record(recordType: $0, recordID: RecordID(recordName: "m1", zoneID: zone), fields: fields, changeTag: "1") }
    }()

    /// The same records as `samples`, as their rows read.
    private static let database: DatabaseQueue? = {
        guard let queue = try? FuzzEntryPoints.makeDatabase() else { return nil }
        let fields = """
            {"blob":{"t":"b","v":"AAEC"},"n":{"t":"i","v":42},"nums":{"t":"L","e":"i","v":[1,-1]},\
            "parent":{"t":"r","v":"m0","x":0},"place":{"t":"l","v":[48.85,2.35]},"ratio":{"t":"d","v":-2.5},\
            "tags":{"t":"L","e":"s","v":["a","b"]},"text":{"t":"s","v":"Héllo wörld, fuzz"},"when":{"t":"t","v":1700000000.0}}
            """
        do {
            try queue.write { db in
                for (i, type) in recordTypes.enumerated() {
                    try db.execute(sql: """
                        INSERT INTO record (id, zone, name, type, fields, created, modified, creator, modifier, tag)
                        VALUES (?, '_defaultZone', ?, ?, ?, 1700000000.0, 1700000001.0, '_u1', '_u1', '1')
                        """, arguments: [i + 1, "m\(i + 1)", type, fields])
                }
                try db.execute(sql: "INSERT INTO field_mark (type, key, options) VALUES ('Message', 'text', 7)")
                try db.execute(sql: "INSERT INTO record_search (rowid, body) VALUES (1, 'Héllo wörld, fuzz')")
            }
        } catch {
            return nil
        }
        return queue
    }()

    static func run(_ bytes: [UInt8]) -> String {
        let pieces = InputPieces.split(bytes[...], at: InputPieces.unit)
        let format = InputPieces.text(pieces[0])
        let arguments = pieces.dropFirst().map(PredicateArgumentInput.value)
        let predicate: QueryPredicate
        do {
            predicate = try QueryPredicate(format: format, argumentArray: arguments)
        } catch {
            return "refused: \(error)"
        }
        let matches = samples.map { predicate.evaluate(with: $0) }
        guard let database else { return "parsed; in memory \(matches); no in-memory database" }
        do {
            let counts = try database.read { db in
                try recordTypes.map { try FuzzEntryPoints.runQuery(Query(recordType: $0, predicate: predicate), in: db, limit: 10) }
            }
            return "parsed; in memory \(matches); SQL \(counts)"
        } catch {
            return "parsed; in memory \(matches); SQL threw: \(error)"
        }
    }
}

/// One predicate argument spelled in a fuzz input: a type letter, then the value.
///
/// `s` a String, `i` an Int64, `d` a Double, `t` a Date (seconds since 1970),
/// `r` a RecordID, `l` a Location (`lat,lon[,alt,accuracy]`), `b` bytes,
/// `L` a list whose elements follow, separated by GS. Anything else is the
/// whole piece as a String.
enum PredicateArgumentInput {
    static func value(_ piece: ArraySlice<UInt8>) -> FieldValue {
        guard let letter = piece.first else { return .string("") }
        let rest = piece.dropFirst()
        let text = InputPieces.text(rest)
        switch letter {
        case UInt8(ascii: "s"): return .string(text)
        case UInt8(ascii: "i"): return .int64(Int64(text) ?? 0)
        case UInt8(ascii: "d"): return .double(Double(text) ?? 0)
        case UInt8(ascii: "t"): return .date(Date(timeIntervalSince1970: Double(text) ?? 0))
        case UInt8(ascii: "r"): return .reference(Reference(recordID: RecordID(recordName: text)))
        case UInt8(ascii: "l"):
            let numbers = text.split(separator: ",").map { Double($0) ?? 0 }
            return .location(Location(latitude: numbers.first ?? 0, longitude: numbers.dropFirst().first ?? 0,
                                      altitude: numbers.dropFirst(2).first, horizontalAccuracy: numbers.dropFirst(3).first))
        case UInt8(ascii: "b"): return .bytes(Data(rest))
        case UInt8(ascii: "L"): return .list(InputPieces.split(rest, at: InputPieces.element).map(value))
        default: return .string(InputPieces.text(piece))
        }
    }
}
