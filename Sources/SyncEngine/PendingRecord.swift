import Foundation
import RecordStore

/// A record waiting in the outbox, in the one form the outbox keeps it in: JSON text, decoded only to be sent.
///
/// The private database then never reads the record's fields, so references
/// into the public database stay as they are. Two kinds of value are kept
/// beside the text instead, in a ``Sidecar``, and the text names each by its
/// place there: assets, so that the private database holds a copy of each
/// file until it is sent; and bytes, which as base64 text would grow by a
/// third and could push a record the public database takes past the size
/// limit of the outbox record.
///
/// The record's type is not in the text: the outbox record keeps it under `type`, for deletes too.
struct PendingRecord: Codable, Sendable {
    /// The change tag the app's copy had: the save is conditional on it.
    var tag: String?
    var fields: [String: Value]

    /// One field value; the cases follow `FieldValue`.
    enum Value: Codable, Sendable {
        case scalar(Scalar)
        case list([Scalar])
    }

    /// A value that is not a list; lists do not nest.
    enum Scalar: Codable, Sendable {
        case string(String), int64(Int64), double(Double), date(Date)
        case location(Location), reference(Reference)
        /// Bytes, by their place in the sidecar.
        case bytes(Int)
        /// An asset, by its place in the sidecar.
        case asset(Int)
    }

    /// The values the outbox record keeps in fields of their own, beside the text.
    struct Sidecar: Sendable {
        var assets: [Asset] = []
        var bytes: [Data] = []
    }

    /// Takes `record` apart, appending its assets and bytes to `sidecar`.
    init(_ record: Record, sidecar: inout Sidecar) throws {
        tag = record.recordChangeTag
        // Refused now, as the public database would refuse it, rather than left to fail at send.
        for key in record.fields.keys { try Identifier.checkFieldKey(key) }
        fields = try record.fields.mapValues { value in
            guard case .list(let items) = value else { return .scalar(try Self.scalar(value, sidecar: &sidecar)) }
            let scalars = try items.map { try Self.scalar($0, sidecar: &sidecar) }
            guard Set(items.map(\.typeName)).count <= 1 else {
                throw StoreError(.invalidArguments, "\(record.recordID) holds a list that mixes types; all elements of a list must have one type.")
            }
            return .list(scalars)
        }
    }

    private static func scalar(_ value: FieldValue, sidecar: inout Sidecar) throws -> Scalar {
        switch value {
        case .string(let v): return .string(v)
        case .int64(let v): return .int64(v)
        case .double(let v): return .double(v)
        case .date(let v): return .date(v)
        case .location(let v): return .location(v)
        case .reference(let v): return .reference(v)
        case .bytes(let v):
            sidecar.bytes.append(v)
            return .bytes(sidecar.bytes.count - 1)
        case .asset(let v):
            sidecar.assets.append(v)
            return .asset(sidecar.assets.count - 1)
        case .list:
            throw StoreError(.invalidArguments, "A list holds a list; lists cannot be nested.")
        }
    }

    /// The record to send, of type `type` with ID `id`, its assets and bytes taken from `sidecar`
    /// (the assets as the private database stored them). `nil` if the text names a place the sidecar does not hold.
    func record(type: String, id: RecordID, sidecar: Sidecar) -> Record? {
        func value(_ scalar: Scalar) -> FieldValue? {
            switch scalar {
            case .string(let v): .string(v)
            case .int64(let v): .int64(v)
            case .double(let v): .double(v)
            case .date(let v): .date(v)
            case .location(let v): .location(v)
            case .reference(let v): .reference(v)
            case .bytes(let index): sidecar.bytes.indices.contains(index) ? .bytes(sidecar.bytes[index]) : nil
            case .asset(let index): sidecar.assets.indices.contains(index) ? .asset(sidecar.assets[index]) : nil
            }
        }
        var restored: [String: FieldValue] = [:]
        for (key, field) in fields {
            switch field {
            case .scalar(let scalar):
                guard let v = value(scalar) else { return nil }
                restored[key] = v
            case .list(let scalars):
                let items = scalars.compactMap(value)
                guard items.count == scalars.count else { return nil }
                restored[key] = .list(items)
            }
        }
        return Record(recordType: type, recordID: id, fields: restored, changeTag: tag)
    }

    /// The JSON text the outbox stores; a number that is not finite is refused, as the store refuses it.
    func text(for id: RecordID) throws -> String {
        do {
            return String(decoding: try JSONEncoder().encode(self), as: UTF8.self)
        } catch {
            throw StoreError(.invalidArguments, "\(id) holds a number that is not finite; only finite numbers can be stored.")
        }
    }

    /// Reads the text the outbox stored, or `nil` if it does not decode.
    init?(text: String) {
        guard let decoded = try? JSONDecoder().decode(Self.self, from: Data(text.utf8)) else { return nil }
        self = decoded
    }
}
