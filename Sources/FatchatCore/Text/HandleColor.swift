import Foundation

/// A handle's colour, hashed from the user's identity so it is the same everywhere:
/// in the full-screen client and in `bot`/`read` output to a terminal.
public enum HandleColor {
    /// The xterm colour indices handles are drawn in: readable on dark and light backgrounds.
    public static let palette: [UInt8] = [1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14]

    /// The palette colour for a user id: 32-bit FNV-1a of its UTF-8 bytes, modulo the palette.
    public static func of(userID: String) -> UInt8 {
        palette[Int(fnv1a(userID) % UInt32(palette.count))]
    }

    /// The 32-bit FNV-1a hash of a string's UTF-8 bytes.
    public static func fnv1a(_ text: String) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in text.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return hash
    }

    /// The same colour as an ANSI SGR code, for plain output.
    static func ansi(for user: String) -> String {
        let colour = of(userID: user)
        return colour < 8 ? "3\(colour)" : "9\(colour - 8)"
    }
}
