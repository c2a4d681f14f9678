import Foundation
import GRDB

/// Strict, throwing reads of the columns of shared tables: the one place RecordStore reads a row's columns.
///
/// GRDB's `row[i] as Double` traps on a value of another type, and its fast
/// path turns text into 0 without a word; a shared file may hold anything in
/// any column. These read the value as SQLite stored it, through GRDB's
/// throwing `Row.decode`, and throw `StoredColumns.Mismatch` unless it has the
/// type the schema means.
enum StoredColumns {
    /// A column's value has the wrong type or is out of range.
    struct Mismatch: Error {
        let problem: String
    }

    /// The earliest and latest dates RecordStore writes or reads: years 1 to 9999, which every formatter can show.
    static let dateRange: ClosedRange<Double> = -62_135_596_800...253_402_300_799

    /// The largest stored fields text read: a record within `Record.maximumSize` encodes to far less.
    ///
    /// Checked before the text is parsed, so a giant value written straight
    /// into the file costs a length comparison, not a parse.
    static let maximumFieldsText = 8 * Record.maximumSize

    /// Runs `body`, which decodes one row of `table`; what it finds wrong becomes a `DamagedRow` at `key`.
    static func decoding<T>(_ table: String, key: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let mismatch as Mismatch {
            throw DamagedRow(table: table, key: key(), problem: mismatch.problem)
        } catch let error as StoreError where error.code == .badDatabase {
            throw DamagedRow(table: table, key: key(), problem: error.message)
        }
    }

    /// Runs `body`; a damaged row is logged once and gives `nil`, so the caller steps over it.
    static func skippingDamage<T>(_ body: () throws -> T) throws -> T? {
        do {
            return try body()
        } catch let damage as DamagedRow {
            DamagedRowLog.note(damage)
            return nil
        }
    }

    /// A column's value as SQLite stored it, whatever its type.
    ///
    /// Decoding a `DatabaseValue` takes any stored value; GRDB's throwing path
    /// is used all the same, so no read of a row has a trapping subscript.
    static func value(_ row: Row, _ index: Int) throws -> DatabaseValue {
        try row.decode(DatabaseValue.self, atIndex: index)
    }

    /// A column's value to name its row with in a report: text as it is, anything else as SQL would write it.
    static func label(_ row: Row, _ index: Int) -> String {
        guard let value = try? value(row, index) else { return "?" }
        if case .string(let text) = value.storage { return text }
        return value.description
    }

    static func text(_ row: Row, _ index: Int, _ column: String) throws -> String {
        let value = try value(row, index)
        guard case .string(let text) = value.storage else { throw Mismatch(problem: "\(column) holds \(describe(value)), not text") }
        return text
    }

    /// Text, or a blob that is valid UTF-8 (SQLite's own conversion); nil for anything else, which the caller steps over or names with a placeholder.
    static func textIfAny(_ row: Row, _ index: Int) throws -> String? {
        String.fromDatabaseValue(try value(row, index))
    }

    static func integer(_ row: Row, _ index: Int, _ column: String) throws -> Int64 {
        let value = try value(row, index)
        guard case .int64(let number) = value.storage else { throw Mismatch(problem: "\(column) holds \(describe(value)), not an integer") }
        return number
    }

    /// Seconds since 1970, finite and within `dateRange`.
    static func date(_ row: Row, _ index: Int, _ column: String) throws -> Date {
        let value = try value(row, index)
        let seconds: Double
        switch value.storage {
        case .double(let d): seconds = d
        case .int64(let i): seconds = Double(i)
        default: throw Mismatch(problem: "\(column) holds \(describe(value)), not a date")
        }
        guard dateRange.contains(seconds) else { throw Mismatch(problem: "\(column) holds the date \(seconds), outside years 1 to 9999") }
        return Date(timeIntervalSince1970: seconds)
    }

    /// Stored fields text, refused before parsing when longer than any record within the size limit encodes to.
    static func fieldsText(_ row: Row, _ index: Int, _ column: String) throws -> String {
        let json = try text(row, index, column)
        let size = json.utf8.count
        if size > maximumFieldsText {
            throw Mismatch(problem: "\(column) holds \(size) bytes, more than a record of at most \(Record.maximumSize) bytes can")
        }
        return json
    }

    /// Like `fieldsText`, for a column that may be NULL.
    static func optionalFieldsText(_ row: Row, _ index: Int, _ column: String) throws -> String? {
        try value(row, index).isNull ? nil : try fieldsText(row, index, column)
    }

    private static func describe(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: "NULL"
        case .int64: "an integer"
        case .double: "a real number"
        case .string: "text"
        case .blob(let data): "a blob of \(data.count) bytes"
        }
    }
}
