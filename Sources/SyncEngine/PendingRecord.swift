import Foundation
import RecordStore

/// How the outbox record of a save holds the record until it is sent: in the store's own stored-field text.
///
/// The fields are ``PackedFields`` text under `fields`, a plain string to the
/// private database, so it never reads them as fields of its own and
/// references into the public database stay as they are. Beside the text:
/// the assets under `assets`, so that the private database holds a copy of
/// each file until it is sent; the bytes under `bytes`, which as base64 text
/// would grow by a third and could push a record the public database takes
/// past the size limit of the outbox record; and the change tag under `tag`.
/// The record's type is under `type`, as for every entry.
///
/// Saves that older builds queued are read in their own forms (see `Outbox+Legacy.swift`).
enum PendingRecord {
    /// Writes `record` into the outbox record `item`; throws `invalidArguments` for what the public database would refuse.
    static func write(_ record: Record, into item: inout Record) throws {
        let packed = try PackedFields(record.fields)
        item["fields"] = .string(packed.text)
        if !packed.assets.isEmpty { item["assets"] = .list(packed.assets.map(FieldValue.asset)) }
        if !packed.bytes.isEmpty { item["bytes"] = .list(packed.bytes.map(FieldValue.bytes)) }
        if let tag = record.recordChangeTag { item["tag"] = .string(tag) }
    }

    /// The record of type `type` with ID `id` that the outbox record `item` holds, in whichever form it was queued.
    /// Throws `badDatabase`, saying what is wrong, when the outbox record is damaged.
    static func read(from item: Record, type: String, id: RecordID) throws -> Record {
        if let text = item["fields"] {
            guard let text = text.stringValue else { throw StoreError(.badDatabase, "Its fields are not text.") }
            let packed = PackedFields(text: text, assets: try list(item, "assets", \.assetValue), bytes: try list(item, "bytes", \.bytesValue))
            return Record(recordType: type, recordID: id, fields: try packed.fields(zone: id.zoneID), changeTag: item["tag"]?.stringValue)
        }
        if item["record"] != nil {
            return try Outbox.textFormRecord(item, type: type, id: id)
        }
        return Outbox.legacyRecord(item, type: type, id: id)
    }

    /// The values of the list under `key`, each of the kind `value` takes; none if there is no such field.
    /// The text names them by place, so one of another kind is damage, not something to step over.
    static func list<T>(_ item: Record, _ key: String, _ value: (FieldValue) -> T?) throws -> [T] {
        guard let field = item[key] else { return [] }
        guard let items = field.listValue, case let values = items.compactMap(value), values.count == items.count else {
            throw StoreError(.badDatabase, "Its \(key) are not a list of the kind the outbox writes.")
        }
        return values
    }
}
