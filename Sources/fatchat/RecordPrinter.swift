import FatchatCore
import Foundation
import RecordStore

/// How records look in `admin query`: one line each, inert, or one JSON object each.
enum RecordPrinter {
    static func write(_ record: Record, json: Bool) {
        var object: [String: Any] = ["recordName": record.recordID.recordName, "recordType": record.recordType]
        if let created = record.creationDate { object["creationDate"] = created.formatted(Date.ISO8601FormatStyle()) }
        if let creator = record.creatorUserRecordID { object["creator"] = creator.recordName }
        if let modified = record.modificationDate { object["modificationDate"] = modified.formatted(Date.ISO8601FormatStyle()) }
        if let modifier = record.lastModifiedUserRecordID { object["lastModifier"] = modifier.recordName }
        if let tag = record.recordChangeTag { object["changeTag"] = tag }
        var fields: [String: Any] = [:]
        for key in record.allKeys { fields[key] = record[key].map(describe) ?? "" }
        object["fields"] = fields
        if json {
            say(JSONText.object(object))
        } else {
            let body = record.allKeys.map { "\($0)=\(fields[$0] ?? "")" }.joined(separator: " ")
            Output.line("\(record.recordID.recordName) [\(record.recordType)] \(body)")
        }
    }

    static func describe(_ value: FieldValue) -> Any {
        switch value {
        case .string(let s): s
        case .int64(let i): i
        case .double(let d): d
        case .bytes(let b): "<\(b.count) bytes>"
        case .date(let d): d.formatted(Date.ISO8601FormatStyle())
        case .location(let l): "(\(l.latitude), \(l.longitude))"
        case .reference(let r): "→\(r.recordID.recordName)" + (r.action == .deleteSelf ? " (deleteSelf)" : "")
        case .asset(let a): "asset:\(a.contentHash ?? "?")"
        case .list(let items): items.map(describe)
        }
    }
}
