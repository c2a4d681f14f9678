import Foundation
import PostgresNIO

/// Strict reads of a row's columns from the server: a value that does not decode throws `StoredColumns.Mismatch`, never traps.
///
/// The schema types every column, so what a member can plant is limited to
/// the contents of their own rows (row-level security keeps them out of
/// everyone else's); those contents are decoded as strictly as a shared file's.
struct PostgresColumns {
    let cells: PostgresRandomAccessRow

    init(_ row: PostgresRow) { cells = row.makeRandomAccess() }

    private func decode<T: PostgresDecodable>(_ index: Int, _ column: String, as type: T.Type) throws -> T {
        guard index < cells.count else { throw StoredColumns.Mismatch(problem: "\(column) is missing from the row") }
        do {
            return try cells[index].decode(T.self)
        } catch {
            throw StoredColumns.Mismatch(problem: "\(column) does not hold a \(T.self)")
        }
    }

    func isNull(_ index: Int) -> Bool { index >= cells.count || cells[index].bytes == nil }

    func text(_ index: Int, _ column: String) throws -> String { try decode(index, column, as: String.self) }

    func optionalText(_ index: Int, _ column: String) throws -> String? { try decode(index, column, as: String?.self) }

    /// An integer column of any width (postgres-nio reads int2, int4 and int8 as `Int64`).
    func integer(_ index: Int, _ column: String) throws -> Int64 { try decode(index, column, as: Int64.self) }

    func real(_ index: Int, _ column: String) throws -> Double { try decode(index, column, as: Double.self) }

    func bool(_ index: Int, _ column: String) throws -> Bool { try decode(index, column, as: Bool.self) }

    func bytes(_ index: Int, _ column: String) throws -> Data { try decode(index, column, as: Data.self) }

    /// A date in seconds since 1970, within the years RecordStore reads and writes.
    func date(_ index: Int, _ column: String) throws -> Date {
        let seconds = try real(index, column)
        guard StoredColumns.dateRange.contains(seconds) else {
            throw StoredColumns.Mismatch(problem: "\(column) is \(seconds), which is no date between the years 1 and 9999")
        }
        return Date(timeIntervalSince1970: seconds)
    }

    /// A `fields` or `previous` text, refused before parsing when it is larger than any record encodes to.
    func fieldsText(_ index: Int, _ column: String) throws -> String {
        let text = try self.text(index, column)
        guard text.utf8.count <= StoredColumns.maximumFieldsText else {
            throw StoredColumns.Mismatch(problem: "\(column) holds \(text.utf8.count) bytes, more than any record")
        }
        return text
    }
}
