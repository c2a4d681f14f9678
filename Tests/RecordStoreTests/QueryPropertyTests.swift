import Foundation
import Testing
@testable import RecordStore

/// Random records and random predicates and orders: SQL must give what the in-memory evaluator and a naive sort give.
struct QueryPropertyTests {
    static let words = ["apple", "Äpfel", "éclair", "banana", "[x", "", "Zebra", "zoë", "apricot", "b"]
    static let places = [Location(latitude: 48.75, longitude: 2.25), Location(latitude: 51.5, longitude: -0.25), Location(latitude: 0, longitude: 0)]

    static func randomRecord(_ i: Int, rng: inout SeededGenerator) -> Record {
        var r = Record(recordType: i % 10 == 9 ? "Other" : "Item", recordID: RecordID(recordName: String(format: "r%03d", i)))
        func maybe(_ value: @autoclosure () -> FieldValue) -> FieldValue? { Bool.random(using: &rng) ? value() : nil }
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: r["mixed"] = .string(words.randomElement(using: &rng) ?? "")
        case 1: r["mixed"] = .int64(Int64.random(in: -3...3, using: &rng))
        case 2: r["mixed"] = .double(Double(Int.random(in: -12...12, using: &rng)) / 4)
        case 3: r["mixed"] = .date(Date(timeIntervalSince1970: Double(Int.random(in: 0...3, using: &rng))))
        default: break
        }
        r["n"] = maybe(.int64(Int64.random(in: 0...5, using: &rng)))
        r["s"] = maybe(.string([words.randomElement(using: &rng) ?? "", words.randomElement(using: &rng) ?? ""].joined(separator: " ")))
        r["t"] = maybe(.string(words.randomElement(using: &rng) ?? ""))
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: r["tags"] = .list((0..<Int.random(in: 0...3, using: &rng)).map { _ in .string(words.randomElement(using: &rng) ?? "") })
        case 1: r["tags"] = .list((0..<Int.random(in: 1...3, using: &rng)).map { _ in .int64(Int64.random(in: 0...3, using: &rng)) })
        case 2: r["tags"] = .string("apple")
        default: break
        }
        r["place"] = maybe(.location(places.randomElement(using: &rng) ?? places[0]))
        r["ref"] = maybe(.reference(Reference(recordID: RecordID(recordName: String(format: "r%03d", Int.random(in: 0...5, using: &rng))))))
        r.creationDate = Date(timeIntervalSince1970: Double(Int.random(in: 0...20, using: &rng)))
        r.modificationDate = Date(timeIntervalSince1970: Double(Int.random(in: 0...20, using: &rng)))
        return r
    }

    static func randomValue(rng: inout SeededGenerator) -> (String, any PredicateArgument) {
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: return ("%@", words.randomElement(using: &rng) ?? "")
        case 1: return ("\(Int.random(in: -3...5, using: &rng))", 0)
        case 2: return ("%@", Double(Int.random(in: -12...12, using: &rng)) / 4)
        case 3: return ("%@", Date(timeIntervalSince1970: Double(Int.random(in: 0...3, using: &rng))))
        default: return ("%@", RecordID(recordName: String(format: "r%03d", Int.random(in: 0...5, using: &rng))))
        }
    }

    /// A random predicate format with its arguments, nested up to `depth`.
    static func randomPredicate(depth: Int, rng: inout SeededGenerator, args: inout [any PredicateArgument]) -> String {
        if depth > 0, Int.random(in: 0..<3, using: &rng) == 0 {
            let shape = Int.random(in: 0..<3, using: &rng)
            let left = randomPredicate(depth: depth - 1, rng: &rng, args: &args)
            if shape == 2 { return "NOT (\(left))" }
            let right = randomPredicate(depth: depth - 1, rng: &rng, args: &args)
            return shape == 0 ? "(\(left) AND \(right))" : "(\(left) OR \(right))"
        }
        let key = ["mixed", "n", "s", "t", "tags", "place", "ref"].randomElement(using: &rng) ?? "n"
        switch Int.random(in: 0..<10, using: &rng) {
        case 0, 1, 2:
            let op = ["==", "!=", "<", "<=", ">", ">="].randomElement(using: &rng) ?? "=="
            var (text, arg) = randomValue(rng: &rng)
            if arg is RecordID, !["==", "!="].contains(op) { (text, arg) = ("%@", "b") }
            if text == "%@" { args.append(arg) }
            return "\(key) \(op) \(text)"
        case 3:
            let values = (0..<Int.random(in: 0...3, using: &rng)).map { _ in randomValue(rng: &rng).1 }
            args.append(values.map(\.predicateValue))
            return "\(key) IN %@"
        case 4:
            args.append(String((words.randomElement(using: &rng) ?? "").prefix(Int.random(in: 0...2, using: &rng))))
            return "\(key) BEGINSWITH %@"
        case 5:
            args.append(randomValue(rng: &rng).1)
            return "tags CONTAINS %@"
        case 6:
            args.append([words.randomElement(using: &rng) ?? "", "APPLE", "Eclair", "zoe"].randomElement(using: &rng) ?? "")
            return "self CONTAINS %@"
        case 7:
            args.append(places.randomElement(using: &rng) ?? places[0])
            return "distanceToLocation:fromLocation:(\(key), %@) \(["<", ">"].randomElement(using: &rng) ?? "<") \(Int.random(in: 0...600, using: &rng) * 1000)"
        case 8:
            let date = Date(timeIntervalSince1970: Double(Int.random(in: 0...20, using: &rng)))
            args.append(date)
            return "\(["creationDate", "modificationDate"].randomElement(using: &rng) ?? "creationDate") \(["<", ">=", "=="].randomElement(using: &rng) ?? "<") %@"
        default:
            args.append(RecordID(recordName: String(format: "r%03d", Int.random(in: 0...30, using: &rng))))
            return "recordID \(["==", "!="].randomElement(using: &rng) ?? "==") %@"
        }
    }

    static func randomSorts(rng: inout SeededGenerator) throws -> [QuerySortDescriptor] {
        try (0..<Int.random(in: 0...3, using: &rng)).map { _ in
            let ascending = Bool.random(using: &rng)
            if Int.random(in: 0..<6, using: &rng) == 0 {
                return try QuerySortDescriptor(distanceOf: "place", from: places.randomElement(using: &rng) ?? places[0], ascending: ascending)
            }
            let key = ["mixed", "n", "s", "t", "ref", "creationDate", "modificationDate", "recordID"].randomElement(using: &rng) ?? "n"
            return try QuerySortDescriptor(key: key, ascending: ascending)
        }
    }

    /// What a sort descriptor sees in a record, as SQLite orders it.
    static func sortValue(_ sort: QuerySortDescriptor, _ record: Record) -> SortableValue {
        switch sort.key {
        case .value(let key): PredicateEvaluation.value(of: key, in: record) ?? .null
        case .distance(let field, let from): record[field]?.locationValue.map { .real($0.distance(to: from)) } ?? .null
        }
    }

    /// The naive answer: filter with the evaluator, sort with SQLite's value order (oldest first when the query names no order), tie-break by insertion order.
    static func expected(_ query: Query, records: [Record], searchable: Set<String>?) -> [String] {
        let order = Dictionary(uniqueKeysWithValues: records.enumerated().map { ($1.recordID, $0) })
        let idAscending = query.order.last?.ascending ?? true
        return records
            .filter { $0.recordType == query.recordType && query.predicate.evaluate(with: $0, searchableKeys: searchable) }
            .sorted { a, b in
                for sort in query.order {
                    let c = SortableValue.compare(sortValue(sort, a), sortValue(sort, b))
                    if c != 0 { return sort.ascending ? c < 0 : c > 0 }
                }
                let (x, y) = (order[a.recordID] ?? 0, order[b.recordID] ?? 0)
                return idAscending ? x < y : x > y
            }
            .map(\.recordID.recordName)
    }

    @Test(arguments: [(UInt64(1), false), (UInt64(2), true), (UInt64(3), false), (UInt64(4), true)])
    func sqlAgreesWithEvaluator(seed: UInt64, marked: Bool) throws {
        let temp = try TemporaryContainer()
        let db = temp.container.publicDatabase
        var rng = SeededGenerator(seed: seed)
        let records = (0..<250).map { Self.randomRecord($0, rng: &rng) }
        if marked {
            try db.setIndexes([.queryable, .sortable], forField: "mixed", ofType: "Item")
            try db.setIndexes(.searchable, forField: "s", ofType: "Item")
        }
        try db.seed(records, creator: temp.container.currentUserRecordID)
        if marked { try db.setIndexes([.searchable, .queryable], forField: "t", ofType: "Item") }
        let searchable: Set<String>? = marked ? ["s", "t"] : nil
        for round in 0..<150 {
            var args: [any PredicateArgument] = []
            let format = Self.randomPredicate(depth: 3, rng: &rng, args: &args)
            let query = Query(recordType: "Item", predicate: try QueryPredicate(format: format, argumentArray: args),
                              sortDescriptors: try Self.randomSorts(rng: &rng))
            let limit = Int.random(in: 1...60, using: &rng)
            var got: [String] = []
            do {
                var page = try db.records(matching: query, resultsLimit: limit)
                got += page.records.map(\.recordID.recordName)
                while let cursor = page.cursor {
                    page = try db.records(continuing: cursor, resultsLimit: limit)
                    got += page.records.map(\.recordID.recordName)
                }
            } catch {
                Issue.record("seed \(seed) round \(round): \(format) \(args) sorted \(query.sortDescriptors): \(error)")
                return
            }
            let want = Self.expected(query, records: records, searchable: searchable)
            #expect(got == want, "seed \(seed) round \(round): \(format) \(args) sorted \(query.sortDescriptors)")
            if got != want { return }
        }
    }
}
