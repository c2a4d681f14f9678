import Foundation

/// Identifies a zone: its name plus the user who owns it.
///
/// The public database has only the default zone. Custom zones live in a
/// private database, where the owner is always the current user.
public struct ZoneID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The zone's name, unique within its database.
    public var zoneName: String
    /// The record name of the zone's owner; `defaultOwnerName` stands for "the current user".
    public var ownerName: String

    /// The name that CloudKit gives the default zone.
    public static let defaultZoneName = "_defaultZone"
    /// The placeholder owner that means "whoever is signed in".
    public static let defaultOwnerName = "__defaultOwner__"
    /// The default zone, which every database has.
    public static let `default` = ZoneID(zoneName: defaultZoneName)

    /// Creates a zone ID; the owner defaults to the current user.
    public init(zoneName: String, ownerName: String = ZoneID.defaultOwnerName) {
        self.zoneName = zoneName
        self.ownerName = ownerName
    }

    /// Whether this is the default zone.
    public var isDefault: Bool { zoneName == ZoneID.defaultZoneName }

    public var description: String { zoneName }
}

/// Identifies a record: a zone plus a name that is unique within that zone.
public struct RecordID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The record's name within its zone.
    public var recordName: String
    /// The zone the record lives in.
    public var zoneID: ZoneID

    /// Creates a record ID. Without a name, the name is a random UUID, as in CloudKit.
    public init(recordName: String = UUID().uuidString, zoneID: ZoneID = .default) {
        self.recordName = recordName
        self.zoneID = zoneID
    }

    public var description: String {
        zoneID.isDefault ? recordName : "\(zoneID.zoneName)/\(recordName)"
    }
}

/// Checks names that end up as SQL identifiers or JSON paths: record types and field keys.
///
/// Values never appear in SQL text; these names do (in index definitions), so
/// they are held to a strict alphabet: a letter, then letters, digits or `_`.
public enum Identifier {
    static func isValid(_ name: String) -> Bool {
        // On the bytes: every allowed character is ASCII, and this runs for every key of every save.
        let bytes = name.utf8
        guard let first = bytes.first, bytes.count <= 255, isLetter(first) else { return false }
        return bytes.allSatisfy { isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    static func checkRecordType(_ type: String) throws {
        guard isValid(type) else {
            throw StoreError(.invalidArguments, "Record type '\(type)' is not valid: use a letter followed by letters, digits or '_' (at most 255).")
        }
    }

    /// Throws `invalidArguments` for a key a save would refuse; a queue checks with it before it keeps a record.
    public static func checkFieldKey(_ key: String) throws {
        guard isValid(key) else {
            throw StoreError(.invalidArguments, "Field key '\(key)' is not valid: use a letter followed by letters, digits or '_' (at most 255).")
        }
    }
}
