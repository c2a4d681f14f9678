import Foundation

/// A record: a type, an ID, typed fields, and system fields that the database maintains.
///
/// `Record` is a value. It remembers which keys were set since it was fetched
/// (for the `changedKeys` save policy) and the fields it was fetched with (the
/// ancestor that a `serverRecordChanged` error carries).
public struct Record: Hashable, Sendable {
    /// The largest a record may be, not counting asset contents.
    public static let maximumSize = 1_000_000

    public let recordID: RecordID
    public let recordType: String

    public internal(set) var creationDate: Date?
    public internal(set) var modificationDate: Date?
    public internal(set) var creatorUserRecordID: RecordID?
    public internal(set) var lastModifiedUserRecordID: RecordID?
    /// Changes every time the stored record changes; `nil` until the record is first saved.
    public internal(set) var recordChangeTag: String?

    /// The fields, without system fields.
    public private(set) var fields: [String: FieldValue]
    /// Keys set or removed since the record was created or fetched.
    public private(set) var changedKeys: Set<String> = []
    /// The fields as they were when this copy came from the database.
    var ancestorFields: [String: FieldValue]?
    /// Set when the record was fetched with `desiredKeys`: only these keys were loaded.
    public internal(set) var loadedKeys: Set<String>?
    /// The signature its creator's client put on this version (see ``RecordSignature``), stored
    /// beside the fields under a reserved key but never one of them; nil when unsigned.
    var signature: FieldValue?

    /// Creates a new record that the database has not seen yet.
    public init(recordType: String, recordID: RecordID = RecordID()) {
        self.recordType = recordType
        self.recordID = recordID
        self.fields = [:]
    }

    /// Rebuilds a copy of a record from what was kept of it (an outbox, say):
    /// its fields and the change tag it was last fetched with.
    public init(recordType: String, recordID: RecordID, fields: [String: FieldValue], changeTag: String?) {
        self.recordType = recordType
        self.recordID = recordID
        self.fields = fields
        self.recordChangeTag = changeTag
        self.changedKeys = Set(fields.keys)
    }

    /// A record as read from storage, its signature taken out of the stored fields.
    init(stored recordType: String, recordID: RecordID, fields: [String: FieldValue]) {
        var fields = fields
        signature = fields.removeValue(forKey: RecordSignature.fieldKey)
        self.recordType = recordType
        self.recordID = recordID
        self.fields = fields
        self.ancestorFields = fields
    }

    /// The fields as storage keeps them: with the signature under its reserved key.
    var storedFields: [String: FieldValue] {
        guard let signature else { return fields }
        var all = fields
        all[RecordSignature.fieldKey] = signature
        return all
    }

    /// A field's value; a key that was never set reads as `nil`. Setting `nil` removes the key.
    public subscript(key: String) -> FieldValue? {
        get { fields[key] }
        set {
            fields[key] = newValue
            changedKeys.insert(key)
        }
    }

    /// The keys that have a value, sorted.
    public var allKeys: [String] { fields.keys.sorted() }

    /// Whether only some keys were loaded (a fetch with `desiredKeys`).
    public var isPartial: Bool { loadedKeys != nil }

    /// The record as the database had it when this copy was fetched, if it came from there.
    public var ancestor: Record? {
        guard let ancestorFields else { return nil }
        var copy = self
        copy.fields = ancestorFields
        copy.changedKeys = []
        return copy
    }

    /// Every reference the record holds, including those inside lists.
    var references: [Reference] {
        fields.values.flatMap { value -> [Reference] in
            switch value {
            case .reference(let r): [r]
            case .list(let items): items.compactMap(\.referenceValue)
            default: []
            }
        }
    }

    /// Every asset the record holds, including those inside lists.
    var assets: [Asset] {
        fields.values.flatMap { value -> [Asset] in
            switch value {
            case .asset(let a): [a]
            case .list(let items): items.compactMap(\.assetValue)
            default: []
            }
        }
    }

    /// The size that counts toward `maximumSize`.
    var storageSize: Int {
        fields.reduce(recordType.utf8.count) { $0 + $1.key.utf8.count + $1.value.storageSize }
    }

    mutating func replaceFields(_ newFields: [String: FieldValue]) {
        fields = newFields
    }

    mutating func markSaved() {
        changedKeys = []
        ancestorFields = fields
    }
}
