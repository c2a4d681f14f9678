import Foundation
import RecordStore

/// Reads saves that older builds queued in forms of their own, so that an upgrade sends them rather than losing them.
///
/// Nothing writes these forms any more (see ``PendingRecord``); an entry in
/// one is read as it is until it is sent or discarded. Two forms:
/// - the field-by-field form of the builds before one text held the record:
///   each field of the record under `f_<key>`, a reference (or list of them)
///   as an `"action:name"` string with its key listed in `refKeys`, and the
///   change tag under `tag`;
/// - the Codable text form that followed: the record as Foundation's JSON
///   under `record` (see ``CodableFormRecord``), its assets and bytes under
///   `assets` and `bytes`, named in the text by their place.
extension Outbox {
    private static let legacyFieldPrefix = "f_"

    /// The record an older build's outbox record holds.
    static func legacyRecord(_ item: Record, type: String, id: RecordID) -> Record {
        var fields: [String: FieldValue] = [:]
        let referenceKeys = Set(item["refKeys"]?.listValue?.compactMap(\.stringValue) ?? [])
        for key in item.allKeys where key.hasPrefix(legacyFieldPrefix) {
            let name = String(key.dropFirst(legacyFieldPrefix.count))
            guard let value = item[key] else { continue }
            fields[name] = referenceKeys.contains(name) ? restoredReference(value) : value
        }
        return Record(recordType: type, recordID: id, fields: fields, changeTag: item["tag"]?.stringValue)
    }

    /// A reference (or list of them) from the `"action:name"` strings an older build kept.
    private static func restoredReference(_ value: FieldValue) -> FieldValue {
        func restored(_ text: String) -> FieldValue {
            let parts = text.split(separator: ":", maxSplits: 1)
            let action = parts.first.flatMap { Reference.Action(rawValue: String($0)) } ?? .none
            return .reference(Reference(recordID: RecordID(recordName: parts.count == 2 ? String(parts[1]) : text), action: action))
        }
        switch value {
        case .string(let text): return restored(text)
        case .list(let items): return .list(items.compactMap(\.stringValue).map(restored))
        default: return value
        }
    }
}

extension Outbox {
    /// The record a save in the Codable text form holds; throws `badDatabase` when its text does not decode.
    static func textFormRecord(_ item: Record, type: String, id: RecordID) throws -> Record {
        guard let text = item["record"]?.stringValue,
              let kept = try? JSONDecoder().decode(CodableFormRecord.self, from: Data(text.utf8)) else {
            throw StoreError(.badDatabase, "Its record text does not decode.")
        }
        let assets = try PendingRecord.list(item, "assets", \.assetValue)
        let bytes = try PendingRecord.list(item, "bytes", \.bytesValue)
        return try kept.record(type: type, id: id, assets: assets, bytes: bytes)
    }
}

/// A record as the Codable text form kept it, in the shape Foundation's JSON coding gave it
/// (`{"tag": …, "fields": {key: {"scalar": {"_0": {"string": {"_0": …}}}}}}`).
///
/// Only read, with `JSONDecoder`: the names of its types and cases are that form's keys, and must not change.
struct CodableFormRecord: Decodable {
    var tag: String?
    var fields: [String: Value]

    enum Value: Decodable {
        case scalar(Scalar)
        case list([Scalar])
    }

    enum Scalar: Decodable {
        case string(String), int64(Int64), double(Double), date(Date)
        case location(Location), reference(Reference)
        /// Bytes, by their place in the outbox record's `bytes`.
        case bytes(Int)
        /// An asset, by its place in the outbox record's `assets`.
        case asset(Int)
    }

    /// The record, its assets and bytes taken by place; throws `badDatabase` for a place that is not there.
    func record(type: String, id: RecordID, assets: [Asset], bytes: [Data]) throws -> Record {
        func value(_ scalar: Scalar, key: String) throws -> FieldValue {
            switch scalar {
            case .string(let v): return .string(v)
            case .int64(let v): return .int64(v)
            case .double(let v): return .double(v)
            case .date(let v): return .date(v)
            case .location(let v): return .location(v)
            case .reference(let v): return .reference(v)
            case .bytes(let place) where bytes.indices.contains(place): return .bytes(bytes[place])
            case .asset(let place) where assets.indices.contains(place): return .asset(assets[place])
            case .bytes, .asset: throw StoreError(.badDatabase, "Its field '\(key)' names bytes or an asset that it does not hold.")
            }
        }
        var restored: [String: FieldValue] = [:]
        for (key, field) in fields {
            switch field {
            case .scalar(let scalar): restored[key] = try value(scalar, key: key)
            case .list(let scalars): restored[key] = .list(try scalars.map { try value($0, key: key) })
            }
        }
        return Record(recordType: type, recordID: id, fields: restored, changeTag: tag)
    }
}
