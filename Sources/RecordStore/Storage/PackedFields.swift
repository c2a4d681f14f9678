import Foundation

/// A record's fields in the store's own stored-field text, with their bytes and assets kept beside the text.
///
/// For holding a record somewhere else until it is saved, as the sync
/// engine's outbox does. The text is what the store writes into its
/// `record.fields` column, except that a bytes or asset value is written as
/// its place in ``bytes`` or ``assets``: bytes would grow by a third as base64
/// text, and assets kept as real assets of the record that holds the text keep
/// their files until then. References are read back into the zone the caller names.
public struct PackedFields: Sendable {
    /// The fields as text.
    public var text: String
    /// The assets the text names by their place here.
    public var assets: [Asset]
    /// The bytes the text names by their place here.
    public var bytes: [Data]

    /// Packs `fields`; throws `invalidArguments` for what a save would refuse
    /// (a bad key, a number that is not finite, a list that mixes types or nests).
    public init(_ fields: [String: FieldValue]) throws {
        var sidecar: FieldCoding.Sidecar? = FieldCoding.Sidecar()
        text = try FieldCoding.encode(fields, beside: &sidecar)
        assets = sidecar?.assets ?? []
        bytes = sidecar?.bytes ?? []
    }

    /// Fields packed earlier, as they were kept.
    public init(text: String, assets: [Asset], bytes: [Data]) {
        self.text = text
        self.assets = assets
        self.bytes = bytes
    }

    /// The fields, their references in `zone`.
    /// Throws `badDatabase`, naming the field, for text that is damaged or names a place that is not there.
    public func fields(zone: ZoneID) throws -> [String: FieldValue] {
        try FieldCoding.decode(text, zone: zone, beside: FieldCoding.Sidecar(assets: assets, bytes: bytes))
    }
}
