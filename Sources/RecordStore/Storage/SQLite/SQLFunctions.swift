import Foundation
import GRDB

/// SQL functions that queries call, registered on every connection.
///
/// They run the same Swift code as the in-memory evaluator, so a query and
/// a subscription agree on distances and on token search without FTS5.
enum SQLFunctions {
    static func register(_ db: GRDB.Database) {
        db.add(function: distance)
        db.add(function: tokensMatch)
    }

    /// `fatchat_distance(lat, lon, lat2, lon2)`: meters between two points, NULL if any is missing.
    static let distance = DatabaseFunction("fatchat_distance", argumentCount: 4, pure: true) { values -> Double? in
        let numbers = values.compactMap { Double.fromDatabaseValue($0) }
        guard numbers.count == 4 else { return nil }
        return Location(latitude: numbers[0], longitude: numbers[1]).distance(to: Location(latitude: numbers[2], longitude: numbers[3]))
    }

    /// `fatchat_tokens_match(fields, words)`: whether every word is a token of the record's string fields.
    static let tokensMatch = DatabaseFunction("fatchat_tokens_match", argumentCount: 2, pure: true) { values -> Bool in
        guard let json = String.fromDatabaseValue(values[0]), json.utf8.count <= StoredColumns.maximumFieldsText,
              let words = String.fromDatabaseValue(values[1]),
              let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return false }
        let texts = object.values.compactMap { field -> String? in
            guard let field = field as? [String: Any], field["t"] as? String == "s" else { return nil }
            return field["v"] as? String
        }
        return TextTokens.matches(TextTokens.tokens(of: words), in: texts)
    }
}
