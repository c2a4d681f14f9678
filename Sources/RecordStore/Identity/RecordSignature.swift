import Foundation

/// The signature a client puts on every record it saves to the public database, and the bytes it signs.
///
/// The signed message is a canonical encoding of the record's type, zone,
/// name, creator, the change tag of the version it replaces, and its fields
/// (in their stored JSON, keys sorted, the signature field left out). The
/// signature is kept in the record itself, in the reserved field
/// `recordSignature`: a version byte, the 64-byte Ed25519 signature, then the
/// replaced change tag. So no engine, log format or schema had to change, and
/// a container made before signatures opens as it did; its records read as
/// unsigned.
public enum RecordSignature {
    /// The reserved field that holds a record's signature.
    public static let fieldKey = "recordSignature"
    static let version: UInt8 = 1
    private static let domain = Data("fatchat record signature 1\0".utf8)

    /// The bytes that are signed; throws only for fields no save would accept.
    static func message(type: String, id: RecordID, creator: String, replacing changeTag: String?, fields: [String: FieldValue]) throws -> Data {
        var unsigned = fields
        unsigned[fieldKey] = nil
        var out = domain
        for part in [type, id.zoneID.zoneName, id.recordName, creator, changeTag ?? "", try FieldCoding.encode(unsigned)] {
            let bytes = Data(part.utf8)
            var length = UInt32(bytes.count).bigEndian
            out.append(Data(bytes: &length, count: 4))
            out.append(bytes)
        }
        return out
    }

    /// The field value that stores `signature` of a version that replaced `changeTag`.
    static func fieldValue(signature: Data, replacing changeTag: String?) -> FieldValue {
        .bytes(Data([version]) + signature + Data((changeTag ?? "").utf8))
    }

    /// The signature and replaced change tag a field value holds; nil for anything else.
    static func parse(_ value: FieldValue?) -> (signature: Data, replacing: String?)? {
        guard case .bytes(let data) = value, data.count >= 65, data.count <= 65 + 255, data.first == version else { return nil }
        let signature = Data(data.dropFirst().prefix(64))
        let tag = data.dropFirst(65)
        return (signature, tag.isEmpty ? nil : String(decoding: tag, as: UTF8.self))
    }

    /// Fields whose dates survive a trip through the stored JSON unchanged, so a reader encodes exactly what was signed.
    ///
    /// A date is stored as seconds since 1970 and kept in memory as seconds since 2001, so one trip can move
    /// its last bit. Every other value comes back from a trip as it went, and the stored number is the
    /// shortest text that reads back as the same Double, so a trip of a date is this arithmetic alone. It
    /// used to be made through the text, which cost a heartbeat two encodings and a decoding, twice a save.
    static func settled(_ fields: [String: FieldValue]) -> [String: FieldValue] {
        var settled = fields
        for (key, value) in fields {
            switch value {
            case .date(let date):
                settled[key] = .date(Self.settled(date))
            case .list(let items) where items.contains(where: { $0.dateValue != nil }):
                settled[key] = .list(items.map { item in item.dateValue.map { .date(Self.settled($0)) } ?? item })
            default:
                break
            }
        }
        return settled
    }

    /// `date` after as many trips through its stored seconds as it takes to come back unchanged.
    static func settled(_ date: Date) -> Date {
        var current = date
        for _ in 0..<4 {
            let next = Date(timeIntervalSince1970: current.timeIntervalSince1970)
            defer { current = next }
            if next.timeIntervalSince1970.bitPattern == current.timeIntervalSince1970.bitPattern { break }
        }
        return current
    }
}

/// What a reader can say about who wrote a record.
public enum SignatureCheck: Sendable, Equatable {
    /// Signed by its creator's published key.
    case verified
    /// It carries no signature: saved by an older build, or written into the file directly.
    case unsigned
    /// Its creator has published no key that can be believed.
    case unknownKey
    /// The signature does not match the record: it was changed, or forged, after it was signed.
    case badSignature

    /// Whether the record's creator is known to have written it as it is.
    public var isVerified: Bool { self == .verified }

    /// A short reason for `admin check` and notices.
    public var description: String {
        switch self {
        case .verified: "verified"
        case .unsigned: "unsigned"
        case .unknownKey: "its creator has published no key"
        case .badSignature: "its signature does not match"
        }
    }
}
