import Foundation

/// The bytes of a log file, version 1. Every integer is little-endian.
///
/// ```
/// header: "FATCHLOG" | version u32 | body length u32 | body | crc32c u32 of all before it
///         body = client (16 bytes) | generation u64 | account (u16 length + UTF-8)
/// entry:  body length u32 | crc32c u32 of the length's 4 bytes and the body | body
///         body = kind u8 (1 save, 2 delete) | time u64 | client (16) | account s16 | zone s16 | name s16
///                save: type s16 | created f64 | modified f64 | change tag s16 | fields (u32 length + UTF-8)
/// ```
/// The checksum covers the length, so a damaged length is caught rather than
/// trusted. A file is only ever appended to by its one writer, so the bytes
/// up to the last entry that checks out never change (compaction writes a new file).
enum LogFormat {
    static let magic: [UInt8] = Array("FATCHLOG".utf8)
    static let version: UInt32 = 1
    /// The largest header any reader accepts.
    static let maximumHeaderBody = 1024
    /// The largest entry body any reader accepts: a record's largest stored fields plus room for the rest.
    static let maximumEntryBody = StoredColumns.maximumFieldsText + 64 * 1024
    /// Bytes before an entry's body: its length and checksum.
    static let framePrefix = 8

    enum Kind: UInt8 {
        case save = 1
        case delete = 2
    }

    // MARK: Writing

    static func encode(_ header: LogHeader) -> [UInt8] {
        var body = ByteWriter()
        body.uuid(header.client)
        body.u64(header.generation)
        body.string16(header.account)
        var out = ByteWriter()
        out.bytes.append(contentsOf: magic)
        out.u32(version)
        out.u32(UInt32(body.bytes.count))
        out.bytes.append(contentsOf: body.bytes)
        out.u32(CRC32C.checksum(out.bytes))
        return out.bytes
    }

    /// Appends one framed entry to `out`; throws if a string is too long for its length field.
    static func encode(_ entry: LogEntry, into out: inout [UInt8]) throws {
        var body = ByteWriter()
        switch entry.change {
        case .save: body.u8(Kind.save.rawValue)
        case .delete: body.u8(Kind.delete.rawValue)
        }
        body.u64(entry.time.rawValue)
        body.uuid(entry.client)
        try body.checkedString16(entry.account)
        try body.checkedString16(entry.recordID.zoneID.zoneName)
        try body.checkedString16(entry.recordID.recordName)
        if case .save(let saved) = entry.change {
            try body.checkedString16(saved.recordType)
            body.u64(saved.created.bitPattern)
            body.u64(saved.modified.bitPattern)
            try body.checkedString16(saved.changeTag)
            body.u32(UInt32(clamping: saved.fields.utf8.count))
            body.bytes.append(contentsOf: saved.fields.utf8)
        }
        guard body.bytes.count <= maximumEntryBody else {
            throw StoreError(.limitExceeded, "A change to \(entry.recordID) takes \(body.bytes.count) bytes in the log, more than \(maximumEntryBody); move data into an asset.")
        }
        var length = ByteWriter()
        length.u32(UInt32(body.bytes.count))
        let crc = body.bytes.withUnsafeBytes { CRC32C.checksum($0, continuing: CRC32C.checksum(length.bytes)) }
        out.append(contentsOf: length.bytes)
        var crcBytes = ByteWriter()
        crcBytes.u32(crc)
        out.append(contentsOf: crcBytes.bytes)
        out.append(contentsOf: body.bytes)
    }

    // MARK: Reading

    /// Why a header could not be read.
    enum HeaderProblem: Error, Equatable {
        /// Fewer bytes than a header needs: a writer is making the file, or it was cut short. Try again later.
        case incomplete
        /// Not a Fatchat log, a version this build does not know, or damaged.
        case invalid(String)
    }

    /// Reads the header at the start of `bytes`; returns it with its size in bytes.
    static func decodeHeader(_ bytes: UnsafeRawBufferPointer) -> Result<(LogHeader, Int), HeaderProblem> {
        let fixed = magic.count + 8
        guard bytes.count >= fixed else { return .failure(.incomplete) }
        guard Array(bytes[0..<magic.count]) == magic else { return .failure(.invalid("it does not start as a Fatchat log")) }
        var reader = ByteReader(bytes, from: magic.count)
        guard let version = reader.u32(), let length = reader.u32() else { return .failure(.incomplete) }
        guard version == Self.version else { return .failure(.invalid("it is log format \(version); this build reads \(Self.version)")) }
        guard length <= maximumHeaderBody else { return .failure(.invalid("its header claims \(length) bytes")) }
        let total = fixed + Int(length) + 4
        guard bytes.count >= total else { return .failure(.incomplete) }
        var crcReader = ByteReader(bytes, from: total - 4)
        guard crcReader.u32() == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(total - 4)])) else {
            return .failure(.invalid("its header's checksum is wrong"))
        }
        var body = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[fixed..<(total - 4)]), from: 0)
        guard let client = body.uuid(), let generation = body.u64(), let account = body.string16(), body.isAtEnd else {
            return .failure(.invalid("its header does not decode"))
        }
        return .success((LogHeader(client: client, account: account, generation: generation), total))
    }

    /// What one look at the bytes after an offset found.
    enum Frame {
        /// A whole entry whose checksum holds, `size` bytes long in all; its body may still not decode.
        case entry(Result<LogEntry, EntryProblem>, size: Int)
        /// Not all of the entry is there yet: a torn tail, or a writer still writing. Read again later.
        case incomplete
        /// The checksum or length is wrong: nothing after this point can be trusted until it reads right.
        case bad(String)
    }

    /// An entry that checked out but does not make sense; it is skipped and counted.
    struct EntryProblem: Error, Equatable {
        var reason: String
    }

    /// Looks at the frame at the start of `bytes`, which holds whatever has been read so far.
    static func frame(_ bytes: UnsafeRawBufferPointer) -> Frame {
        var prefix = ByteReader(bytes, from: 0)
        guard let length = prefix.u32(), let crc = prefix.u32() else { return .incomplete }
        guard length <= maximumEntryBody else { return .bad("an entry claims \(length) bytes, more than any entry may have") }
        let size = framePrefix + Int(length)
        guard bytes.count >= size else { return .incomplete }
        let sum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[framePrefix..<size]),
                                  continuing: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<4])))
        guard sum == crc else { return .bad("an entry's checksum is wrong") }
        return .entry(decodeBody(UnsafeRawBufferPointer(rebasing: bytes[framePrefix..<size])), size: size)
    }

    /// Decodes an entry's body; every length is checked against what is there.
    static func decodeBody(_ bytes: UnsafeRawBufferPointer) -> Result<LogEntry, EntryProblem> {
        var reader = ByteReader(bytes, from: 0)
        guard let kindByte = reader.u8(), let kind = Kind(rawValue: kindByte) else { return .failure(EntryProblem(reason: "unknown kind of change")) }
        guard let time = reader.u64(), let client = reader.uuid(), let account = reader.string16(),
              let zone = reader.string16(), let name = reader.string16() else {
            return .failure(EntryProblem(reason: "the entry ends early or holds text that is not UTF-8"))
        }
        // The cache keeps stamps in SQLite's signed integers, where order must hold.
        guard time <= UInt64(Int64.max) else { return .failure(EntryProblem(reason: "its clock stamp is out of range")) }
        guard !account.isEmpty, !zone.isEmpty, !name.isEmpty, name.utf8.count <= 255, zone.utf8.count <= 255 else {
            return .failure(EntryProblem(reason: "an empty or overlong name"))
        }
        let change: LogEntry.Change
        switch kind {
        case .delete:
            change = .delete
        case .save:
            guard let type = reader.string16(), let created = reader.u64().map(Double.init(bitPattern:)),
                  let modified = reader.u64().map(Double.init(bitPattern:)), let tag = reader.string16(),
                  let fields = reader.string32() else {
                return .failure(EntryProblem(reason: "the saved record ends early or holds text that is not UTF-8"))
            }
            guard Identifier.isValid(type), StoredColumns.dateRange.contains(created), StoredColumns.dateRange.contains(modified) else {
                return .failure(EntryProblem(reason: "the saved record's type or dates are not valid"))
            }
            change = .save(LogEntry.Saved(recordType: type, fields: fields, created: created, modified: modified, changeTag: tag))
        }
        guard reader.isAtEnd else { return .failure(EntryProblem(reason: "bytes follow the entry's last field")) }
        return .success(LogEntry(account: account, client: client, time: HybridTime(rawValue: time),
                                 recordID: RecordID(recordName: name, zoneID: ZoneID(zoneName: zone)), change: change))
    }
}

/// Builds little-endian bytes.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func uuid(_ value: UUID) { withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) } }

    /// A string of at most 65,535 bytes; longer is cut short (only headers we make ourselves use this).
    mutating func string16(_ value: String) {
        let utf8 = Array(value.utf8.prefix(Int(UInt16.max)))
        u16(UInt16(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    mutating func checkedString16(_ value: String) throws {
        guard value.utf8.count <= Int(UInt16.max) else {
            throw StoreError(.limitExceeded, "A name of \(value.utf8.count) bytes does not fit in a log entry.")
        }
        string16(value)
    }
}

/// Reads little-endian values from bytes that came from a file; every read returns nil rather than run past the end.
struct ByteReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var index: Int

    init(_ bytes: UnsafeRawBufferPointer, from index: Int) {
        self.bytes = bytes
        self.index = index
    }

    var isAtEnd: Bool { index == bytes.count }

    private mutating func take(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, count <= bytes.count - index else { return nil }
        defer { index += count }
        return UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)])
    }

    private mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
        guard let raw = take(MemoryLayout<T>.size) else { return nil }
        var value: T = 0
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: raw) }
        return T(littleEndian: value)
    }

    mutating func u8() -> UInt8? { integer(UInt8.self) }
    mutating func u16() -> UInt16? { integer(UInt16.self) }
    mutating func u32() -> UInt32? { integer(UInt32.self) }
    mutating func u64() -> UInt64? { integer(UInt64.self) }

    mutating func uuid() -> UUID? {
        guard let raw = take(16) else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: raw) }
        return UUID(uuid: value)
    }

    /// UTF-8 text with a 16-bit length; nil if it runs past the end or is not valid UTF-8.
    mutating func string16() -> String? {
        guard let count = u16(), let raw = take(Int(count)) else { return nil }
        return String(validating: raw, as: UTF8.self)
    }

    mutating func string32() -> String? {
        guard let count = u32(), let raw = take(Int(count)) else { return nil }
        return String(validating: raw, as: UTF8.self)
    }
}
