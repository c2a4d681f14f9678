import Foundation

/// Turns a record's fields into the JSON text stored in the `record.fields` column, and back.
///
/// Each field is an object `{"t": type, "v": value, ...}`. `v` is the plain
/// value that SQL compares and indexes: text for strings, a number for
/// Int64, Double and Date (seconds since 1970), the record name for a
/// reference, the content hash for an asset, `[lat, lon]` for a location,
/// and an array of those for a list (`"t":"L"`, element type in `"e"`).
///
/// Text made for a ``Sidecar`` (see ``PackedFields``) differs in one way: a
/// bytes or asset value's `v` is its place in the sidecar, and an asset has no `x`.
enum FieldCoding {
    /// Bytes and assets kept beside the text rather than in it, each named in the text by its place here.
    struct Sidecar: Sendable {
        var assets: [Asset] = []
        var bytes: [Data] = []
    }

    static func encode(_ fields: [String: FieldValue]) throws -> String {
        var inline: Sidecar?
        return try encode(fields, beside: &inline)
    }

    /// Encodes `fields`; with a sidecar, appends their bytes and assets to it instead of writing them into the text.
    static func encode(_ fields: [String: FieldValue], beside sidecar: inout Sidecar?) throws -> String {
        var out = "{"
        var first = true
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            try Identifier.checkFieldKey(key)
            if !first { out += "," }
            first = false
            // Keys are identifiers (letters, digits, `_`): nothing to escape.
            out += "\"" + key + "\":"
            try encode(value, key: key, beside: &sidecar, into: &out)
        }
        out += "}"
        return out
    }

    private static func encode(_ value: FieldValue, key: String, beside sidecar: inout Sidecar?, into out: inout String) throws {
        switch value {
        case .list(let items):
            let tags = try items.map { try scalarTag($0, key: key) }
            guard Set(tags).count <= 1 else {
                throw StoreError(.invalidArguments, "Field '\(key)' is a list that mixes types; all elements of a list must have one type.")
            }
            out += "{\"t\":\"L\",\"e\":\"\(tags.first ?? "")\",\"v\":["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                try appendScalarValue(item, key: key, beside: &sidecar, to: &out)
            }
            out += "]"
            let extras = try items.map { try scalarExtra($0, beside: sidecar != nil) }
            if extras.contains(where: { $0 != nil }) {
                out += ",\"x\":[" + extras.map { $0 ?? "null" }.joined(separator: ",") + "]"
            }
            out += "}"
        default:
            out += "{\"t\":\""
            out += try scalarTag(value, key: key)
            out += "\",\"v\":"
            try appendScalarValue(value, key: key, beside: &sidecar, to: &out)
            if let extra = try scalarExtra(value, beside: sidecar != nil) { out += ",\"x\":" + extra }
            out += "}"
        }
    }

    private static func scalarTag(_ value: FieldValue, key: String) throws -> String {
        switch value {
        case .string: "s"
        case .int64: "i"
        case .double: "d"
        case .bytes: "b"
        case .date: "t"
        case .location: "l"
        case .reference: "r"
        case .asset: "a"
        case .list: throw StoreError(.invalidArguments, "Field '\(key)' holds a list inside a list; lists cannot be nested.")
        }
    }

    private static func appendScalarValue(_ value: FieldValue, key: String, beside sidecar: inout Sidecar?, to out: inout String) throws {
        switch value {
        case .string(let s): appendString(s, to: &out)
        case .int64(let i): out += String(i)
        case .double(let d): out += try number(d, key: key)
        case .bytes(let d) where sidecar != nil:
            out += String(sidecar?.bytes.count ?? 0)
            sidecar?.bytes.append(d)
        case .asset(let a) where sidecar != nil:
            out += String(sidecar?.assets.count ?? 0)
            sidecar?.assets.append(a)
        case .bytes(let d): appendString(d.base64EncodedString(), to: &out)
        case .date(let d):
            // A reader refuses a date outside the years 1 to 9999 as damage, so none is stored.
            guard StoredColumns.dateRange.contains(d.timeIntervalSince1970) else {
                throw StoreError(.invalidArguments, "Field '\(key)' holds a date outside the years 1 to 9999, which cannot be stored.")
            }
            out += try number(d.timeIntervalSince1970, key: key)
        case .location(let l): out += "[\(try number(l.latitude, key: key)),\(try number(l.longitude, key: key))]"
        case .reference(let r): appendString(r.recordID.recordName, to: &out)
        case .asset(let a):
            guard let hash = a.contentHash else {
                throw StoreError(.internalError, "Asset in field '\(key)' was not stored before encoding.")
            }
            appendString(hash, to: &out)
        case .list: throw StoreError(.invalidArguments, "Field '\(key)' holds a list inside a list; lists cannot be nested.")
        }
    }

    /// What a value needs beyond `v`: a reference's action, an asset's size (unless the asset is in a sidecar),
    /// a location's altitude and accuracy.
    private static func scalarExtra(_ value: FieldValue, beside: Bool) throws -> String? {
        switch value {
        case .reference(let r): return r.action == .deleteSelf ? "1" : "0"
        case .asset(let a): return beside ? nil : String(a.size ?? 0)
        case .location(let l):
            guard l.altitude != nil || l.horizontalAccuracy != nil else { return nil }
            let alt = try l.altitude.map { try number($0, key: "altitude") } ?? "null"
            let acc = try l.horizontalAccuracy.map { try number($0, key: "horizontalAccuracy") } ?? "null"
            return "[\(alt),\(acc)]"
        default: return nil
        }
    }

    private static func number(_ d: Double, key: String) throws -> String {
        guard d.isFinite else {
            throw StoreError(.invalidArguments, "Field '\(key)' holds \(d); only finite numbers can be stored.")
        }
        return "\(d)"
    }

    /// Appends `s` as a JSON string literal, copying the runs between characters that need an escape whole.
    private static func appendString(_ s: String, to out: inout String) {
        out += "\""
        let bytes = s.utf8
        var runStart = bytes.startIndex
        for index in bytes.indices {
            let byte = bytes[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            out += Substring(s.utf8[runStart..<index])
            switch byte {
            case UInt8(ascii: "\""): out += "\\\""
            case UInt8(ascii: "\\"): out += "\\\\"
            case UInt8(ascii: "\n"): out += "\\n"
            case UInt8(ascii: "\r"): out += "\\r"
            case UInt8(ascii: "\t"): out += "\\t"
            default:
                let hex = String(byte, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
            runStart = bytes.index(after: index)
        }
        out += Substring(s.utf8[runStart...])
        out += "\""
    }

    // MARK: Decoding

    /// Decodes stored fields; `zone` is the record's zone, which its references share.
    static func decode(_ json: String, zone: ZoneID, assetsDirectory: URL, keys: Set<String>? = nil) throws -> [String: FieldValue] {
        try decode(json, zone: zone, source: .stored(assetsDirectory: assetsDirectory), keys: keys)
    }

    /// Decodes fields encoded with a sidecar, taking their bytes and assets from `sidecar`.
    static func decode(_ json: String, zone: ZoneID, beside sidecar: Sidecar) throws -> [String: FieldValue] {
        try decode(json, zone: zone, source: .beside(sidecar), keys: nil)
    }

    /// Where a decoded bytes or asset value comes from.
    private enum Source {
        /// In the text: bytes as base64, an asset as its content hash, its file in this directory.
        case stored(assetsDirectory: URL)
        /// In a sidecar, by place.
        case beside(Sidecar)
    }

    private static func decode(_ json: String, zone: ZoneID, source: Source, keys: Set<String>?) throws -> [String: FieldValue] {
        guard let stored = try? StoredJSON.parseFields(json, keeping: keys) else {
            throw StoreError(.badDatabase, "A stored record's fields are not valid JSON; the database may be damaged.")
        }
        var fields: [String: FieldValue] = [:]
        fields.reserveCapacity(stored.count)
        for (key, parts) in stored {
            guard let parts, case .string(let tag) = parts.tag else {
                throw StoreError(.badDatabase, "Stored field '\(key)' has no type; the database may be damaged.")
            }
            let ctx = Context(key: key, zone: zone, source: source)
            if tag == "L" {
                let element: String = if case .string(let e) = parts.element { e } else { "" }
                let values: [StoredJSON] = if case .array(let v) = parts.value { v } else { [] }
                let extras: [StoredJSON]? = if case .array(let x) = parts.extra { x } else { nil }
                fields[key] = .list(try values.enumerated().map { index, v in
                    try ctx.scalar(tag: element, value: v, extra: extras.flatMap { index < $0.count ? $0[index] : nil })
                })
            } else {
                fields[key] = try ctx.scalar(tag: tag, value: parts.value ?? .null, extra: parts.extra)
            }
        }
        return fields
    }

    private struct Context {
        let key: String
        let zone: ZoneID
        let source: Source

        func scalar(tag: String, value: StoredJSON, extra: StoredJSON?) throws -> FieldValue {
            switch tag {
            case "s":
                if case .string(let s) = value { return .string(s) }
            case "i":
                if let n = value.int64Value { return .int64(n) }
            case "d":
                // `encode` writes finite numbers only; an infinity here was written by hand.
                if let n = value.doubleValue, n.isFinite { return .double(n) }
            case "b":
                switch source {
                case .stored:
                    if case .string(let s) = value, let d = Data(base64Encoded: s) { return .bytes(d) }
                case .beside(let sidecar):
                    if let place = Self.place(value, in: sidecar.bytes) { return .bytes(sidecar.bytes[place]) }
                }
            case "t":
                if let n = value.doubleValue, StoredColumns.dateRange.contains(n) { return .date(Date(timeIntervalSince1970: n)) }
            case "l":
                if case .array(let pair) = value, pair.count == 2,
                   let latitude = pair[0].doubleValue, let longitude = pair[1].doubleValue, latitude.isFinite, longitude.isFinite {
                    let more: [StoredJSON]? = if case .array(let m) = extra { m } else { nil }
                    return .location(Location(
                        latitude: latitude, longitude: longitude,
                        altitude: more?.first?.doubleValue,
                        horizontalAccuracy: more?.last?.doubleValue))
                }
            case "r":
                if case .string(let name) = value {
                    let action: Reference.Action = extra?.int64Value == 1 ? .deleteSelf : .none
                    return .reference(Reference(recordID: RecordID(recordName: name, zoneID: zone), action: action))
                }
            case "a":
                switch source {
                case .stored(let assets):
                    if case .string(let hash) = value {
                        // A stored name becomes a path: anything but a SHA-256 is refused here.
                        guard AssetName.isValid(hash) else {
                            throw StoreError(.badDatabase, "Stored field '\(key)' names an asset that is not a SHA-256; someone wrote it into the file directly.")
                        }
                        return .asset(Asset(fileURL: assets.appendingPathComponent(hash), contentHash: hash, size: extra?.int64Value ?? 0))
                    }
                case .beside(let sidecar):
                    if let place = Self.place(value, in: sidecar.assets) { return .asset(sidecar.assets[place]) }
                }
            default:
                break
            }
            throw StoreError(.badDatabase, "Stored field '\(key)' has a value that does not fit its type '\(tag)'; the database may be damaged.")
        }

        /// A place in `list` that `value` names: an integer within its bounds.
        private static func place<T>(_ value: StoredJSON, in list: [T]) -> Int? {
            guard case .integer(let n) = value, let place = Int(exactly: n), list.indices.contains(place) else { return nil }
            return place
        }
    }
}
