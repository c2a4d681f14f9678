@_spi(Fuzzing) import RecordStore

/// Stored field JSON, as a hostile member can write it into `record.fields` or `change.previous`.
enum StoredFieldsTarget {
    static func run(_ bytes: [UInt8]) -> String {
        do {
            return "decoded \(try FuzzEntryPoints.decodeStoredFields(InputPieces.text(bytes[...]))) fields"
        } catch {
            return "threw: \(error)"
        }
    }
}
