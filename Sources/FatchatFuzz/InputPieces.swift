/// How the structured targets cut one fuzz input into parts, with control bytes that real text rarely holds.
///
/// Seeds stay readable (`printf 'a\x1fb'`), and libFuzzer's byte mutations
/// still reach every part.
enum InputPieces {
    /// Separates rows (ASCII RS).
    static let row: UInt8 = 0x1E
    /// Separates the columns of a row, or a predicate's format from its arguments (ASCII US).
    static let unit: UInt8 = 0x1F
    /// Separates the elements of a list argument (ASCII GS).
    static let element: UInt8 = 0x1D

    /// `bytes` cut at every `separator`, keeping empty pieces.
    static func split(_ bytes: ArraySlice<UInt8>, at separator: UInt8) -> [ArraySlice<UInt8>] {
        bytes.split(separator: separator, omittingEmptySubsequences: false)
    }

    /// The bytes as text, with invalid UTF-8 repaired as SQLite text read into a Swift `String` would be.
    static func text(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
