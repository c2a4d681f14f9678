import Foundation

/// A point on Earth, as CLLocation gives it to CloudKit.
public struct Location: Hashable, Sendable, Codable {
    public var latitude: Double
    public var longitude: Double
    public var altitude: Double?
    public var horizontalAccuracy: Double?

    public init(latitude: Double, longitude: Double, altitude: Double? = nil, horizontalAccuracy: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
    }

    /// The great-circle distance in meters, on a sphere of the Earth's mean radius.
    public func distance(to other: Location) -> Double {
        let r = 6_371_008.8
        let (p1, p2) = (latitude * .pi / 180, other.latitude * .pi / 180)
        let dp = p2 - p1
        let dl = (other.longitude - longitude) * .pi / 180
        let a = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * r * atan2(a.squareRoot(), (1 - a).squareRoot())
    }
}

/// A link from one record to another in the same zone.
public struct Reference: Hashable, Sendable, Codable {
    /// What happens to the record holding the reference when its target is deleted.
    public enum Action: String, Hashable, Sendable, Codable {
        /// Nothing: the reference may dangle.
        case none
        /// The holder is deleted with its target, in the same transaction.
        case deleteSelf
    }

    public var recordID: RecordID
    public var action: Action

    public init(recordID: RecordID, action: Action = .none) {
        self.recordID = recordID
        self.action = action
    }

    /// A reference to `record`.
    public init(_ record: Record, action: Action = .none) {
        self.init(recordID: record.recordID, action: action)
    }
}

/// A file attached to a record. The database stores it once per content, by hash.
public struct Asset: Hashable, Sendable {
    /// The file to copy in when the record is saved; after a fetch, the stored copy.
    public var fileURL: URL
    /// The SHA-256 of the content, set once the asset is stored.
    public internal(set) var contentHash: String?
    /// The size in bytes, set once the asset is stored.
    public internal(set) var size: Int64?

    /// An asset to upload from `fileURL` when its record is saved.
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    init(fileURL: URL, contentHash: String, size: Int64) {
        self.fileURL = fileURL
        self.contentHash = contentHash
        self.size = size
    }
}

/// The value of one field of a record.
public enum FieldValue: Hashable, Sendable {
    case string(String)
    case int64(Int64)
    case double(Double)
    case bytes(Data)
    case date(Date)
    case location(Location)
    case reference(Reference)
    case asset(Asset)
    /// A list; CloudKit requires its elements to share one type, and so does `Record`.
    indirect case list([FieldValue])

    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    public var int64Value: Int64? { if case .int64(let v) = self { v } else { nil } }
    public var doubleValue: Double? {
        switch self {
        case .double(let v): v
        case .int64(let v): Double(v)
        default: nil
        }
    }
    public var bytesValue: Data? { if case .bytes(let v) = self { v } else { nil } }
    public var dateValue: Date? { if case .date(let v) = self { v } else { nil } }
    public var locationValue: Location? { if case .location(let v) = self { v } else { nil } }
    public var referenceValue: Reference? { if case .reference(let v) = self { v } else { nil } }
    public var assetValue: Asset? { if case .asset(let v) = self { v } else { nil } }
    public var listValue: [FieldValue]? { if case .list(let v) = self { v } else { nil } }

    /// The name of the value's type, as error messages show it.
    public var typeName: String {
        switch self {
        case .string: "String"
        case .int64: "Int64"
        case .double: "Double"
        case .bytes: "Bytes"
        case .date: "Date"
        case .location: "Location"
        case .reference: "Reference"
        case .asset: "Asset"
        case .list(let items): "List<\(items.first?.typeName ?? "empty")>"
        }
    }

    /// The size this value counts toward a record's 1 MB limit; assets count only their metadata.
    var storageSize: Int {
        switch self {
        case .string(let s): s.utf8.count
        case .int64, .double, .date: 8
        case .bytes(let d): d.count
        case .location: 32
        case .reference(let r): r.recordID.recordName.utf8.count + r.recordID.zoneID.zoneName.utf8.count + 1
        case .asset: 80
        case .list(let items): items.reduce(0) { $0 + $1.storageSize }
        }
    }
}

extension FieldValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByArrayLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int64(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(arrayLiteral elements: FieldValue...) { self = .list(elements) }
}
