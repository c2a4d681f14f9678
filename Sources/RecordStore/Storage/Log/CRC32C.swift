/// CRC-32C (Castagnoli), the checksum of every log entry.
///
/// It is there to catch a torn append or a damaged block, not forgery:
/// anyone who can write a log can recompute any unkeyed hash, SHA-256 as
/// well, so a cryptographic hash would buy nothing here but time. CRC-32C
/// finds every error burst up to 32 bits and is cheap enough that replaying
/// a million entries is not slowed by it; signatures answer forgery.
enum CRC32C {
    /// One table for the reflected polynomial 0x82F63B78, built once.
    private static let table: [UInt32] = (0..<256).map { byte in
        var crc = UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        return crc
    }

    /// The checksum of `bytes`, continuing from `crc` (the checksum of what came before, 0 at the start).
    static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var value = ~crc
        table.withUnsafeBufferPointer { table in
            for byte in bytes { value = table[Int((value ^ UInt32(byte)) & 0xFF)] ^ (value >> 8) }
        }
        return ~value
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
