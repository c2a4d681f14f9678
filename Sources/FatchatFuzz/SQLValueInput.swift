import Foundation
import GRDB

/// One SQLite value spelled in a fuzz input: a type letter, then the value.
///
/// `n` NULL, `i` an integer, `r` a real (as Swift's `Double` parses it, so
/// `inf` and `nan` too), `t` text, `b` a blob. Anything else is the whole
/// piece as text.
enum SQLValueInput {
    static func value(_ piece: ArraySlice<UInt8>) -> DatabaseValue {
        guard let letter = piece.first else { return "".databaseValue }
        let rest = piece.dropFirst()
        switch letter {
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "i"): return (Int64(InputPieces.text(rest)) ?? 0).databaseValue
        case UInt8(ascii: "r"): return (Double(InputPieces.text(rest)) ?? 0).databaseValue
        case UInt8(ascii: "t"): return InputPieces.text(rest).databaseValue
        case UInt8(ascii: "b"): return Data(rest).databaseValue
        default: return InputPieces.text(piece).databaseValue
        }
    }
}
