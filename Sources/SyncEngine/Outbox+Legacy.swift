import Foundation
import RecordStore

/// Reads saves that builds before ``PendingRecord`` queued, so that an upgrade sends them rather than losing them.
///
/// Those builds kept each field of the record under `f_<key>`, a reference
/// (or list of them) as an `"action:name"` string with its key listed in
/// `refKeys`, and the change tag under `tag`. Nothing writes this form any more;
/// an entry in it is read as it is until it is sent or discarded.
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
