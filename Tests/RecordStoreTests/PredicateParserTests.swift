import Foundation
import Testing
@testable import RecordStore

/// A record with one field of every kind, that the valid predicates are evaluated against.
private let sample: Record = {
    var r = Record(recordType: "Message", recordID: RecordID(recordName: "m1"))
    r["text"] = "Héllo wörld, from Zoë!"
    r["count"] = 5
    r["score"] = 2.5
    r["when"] = .date(Date(timeIntervalSince1970: 1_000))
    r["channel"] = .reference(Reference(recordID: RecordID(recordName: "general")))
    r["tags"] = ["red", "blue"]
    r["numbers"] = [1, 2, 3]
    r["place"] = .location(Location(latitude: 48.8566, longitude: 2.3522))
    r["name"] = "bob"
    r.creationDate = Date(timeIntervalSince1970: 2_000)
    r.modificationDate = Date(timeIntervalSince1970: 3_000)
    r.creatorUserRecordID = RecordID(recordName: "_0_root")
    return r
}()

private let paris = Location(latitude: 48.8566, longitude: 2.3522)
private let london = Location(latitude: 51.5074, longitude: -0.1278)

/// Valid predicates, with their arguments and whether the sample record matches.
private let validCases: [(String, [any PredicateArgument], Bool)] = [
    ("TRUEPREDICATE", [], true),
    ("FALSEPREDICATE", [], false),
    ("count == 5", [], true),
    ("count = 5", [], true),
    ("count == 5.0", [], true),
    ("count != 5", [], false),
    ("count <> 4", [], true),
    ("count < 6", [], true),
    ("count <= 5", [], true),
    ("count > 5", [], false),
    ("count >= 5", [], true),
    ("count =< 5", [], true),
    ("count => 6", [], false),
    ("score > 2", [], true),
    ("score == %@", [2.5], true),
    ("count BETWEEN {1, 5}", [], true),
    ("count BETWEEN {6, 9}", [], false),
    ("count BETWEEN %@", [[Int64(4), Int64(6)]], true),
    ("count IN {1, 3, 5}", [], true),
    ("count IN %@", [[2, 4]], false),
    ("name IN {'alice', 'bob'}", [], true),
    ("name == 'bob'", [], true),
    ("name == \"bob\"", [], true),
    ("name == 'Bob'", [], false),
    ("name > 'alice'", [], true),
    ("name < 5", [], false),
    ("count > 'a'", [], false),
    ("name BEGINSWITH 'bo'", [], true),
    ("name BEGINSWITH 'Bo'", [], false),
    ("text BEGINSWITH %@", ["Héllo"], true),
    ("tags CONTAINS 'red'", [], true),
    ("tags CONTAINS 'green'", [], false),
    ("numbers CONTAINS 2", [], true),
    ("'blue' IN tags", [], true),
    ("%@ IN numbers", [7], false),
    ("self CONTAINS 'hello'", [], true),
    ("SELF CONTAINS 'WORLD'", [], true),
    ("self CONTAINS 'zoe'", [], true),
    ("self CONTAINS 'hello zoe'", [], true),
    ("self CONTAINS 'goodbye'", [], false),
    ("self CONTAINS %@", ["from"], true),
    ("distanceToLocation:fromLocation:(place, %@) < 1000", [paris], true),
    ("distanceToLocation:fromLocation:(place, %@) < 100000", [london], false),
    ("distanceToLocation:fromLocation:(place, %@) > 300000", [london], true),
    ("channel == %@", [RecordID(recordName: "general")], true),
    ("channel == %@", [Reference(recordID: RecordID(recordName: "general"), action: .deleteSelf)], true),
    ("channel == %@", [RecordID(recordName: "random")], false),
    ("channel == %@", [RecordID(recordName: "general", zoneID: ZoneID(zoneName: "other"))], false),
    ("channel != %@", [RecordID(recordName: "general")], false),
    ("channel IN %@", [[RecordID(recordName: "x"), RecordID(recordName: "general")]], true),
    ("recordID == %@", [RecordID(recordName: "m1")], true),
    ("recordID != %@", [RecordID(recordName: "m2")], true),
    ("creatorUserRecordID == %@", [RecordID(recordName: "_0_root")], true),
    ("creationDate > %@", [Date(timeIntervalSince1970: 1_500)], true),
    ("creationDate < %@", [Date(timeIntervalSince1970: 1_500)], false),
    ("modificationDate BETWEEN %@", [[Date(timeIntervalSince1970: 2_999), Date(timeIntervalSince1970: 3_001)]], true),
    ("when == %@", [Date(timeIntervalSince1970: 1_000)], true),
    ("missing == 1", [], false),
    ("missing != 1", [], true),
    ("NOT missing == 1", [], true),
    ("count == 5 AND name == 'bob'", [], true),
    ("count == 5 && name == 'eve'", [], false),
    ("count == 4 OR name == 'bob'", [], true),
    ("count == 4 || name == 'eve'", [], false),
    ("!(count == 4)", [], true),
    ("NOT (count == 5 AND name == 'bob')", [], false),
    ("(count == 4 OR count == 5) AND NOT name BEGINSWITH 'x'", [], true),
    ("%K == %@", ["name", "bob"], true),
    ("tags == 'red'", [], false),
    ("count == -5", [], false),
    ("score < 1e3", [], true),
    ("name in {'bob'} and count between {5, 5}", [], true),
]

/// Invalid predicates, with the character position the error must name.
private let invalidCases: [(String, [any PredicateArgument], Int)] = [
    ("", [], 1),
    ("count ==", [], 9),
    ("count == 5 AND", [], 15),
    ("(count == 5", [], 12),
    ("count == 5)", [], 11),
    ("count LIKE 'a*'", [], 7),
    ("count MATCHES 'a'", [], 7),
    ("name ENDSWITH 'b'", [], 6),
    ("name BEGINSWITH[c] 'b'", [], 16),
    ("count == %@", [], 10),
    ("count == 5", [1], 0),
    ("count ~ 5", [], 7),
    ("name == 'unterminated", [], 9),
    ("count BETWEEN {1}", [], 15),
    ("count BETWEEN 5", [], 15),
    ("count IN 5", [], 10),
    ("recordID < %@", [RecordID(recordName: "a")], 10),
    ("channel > %@", [RecordID(recordName: "a")], 9),
    ("creationDate == 'yesterday'", [], 17),
    ("place == %@", [paris], 10),
    ("distanceToLocation:fromLocation:(place, 5) < 3", [], 41),
    ("distanceToLocation:fromLocation:(place, %@) == 3", [paris], 45),
    ("self == 'a'", [], 6),
    ("creationDate CONTAINS 'x'", [], 14),
    ("channel.name == 'x'", [], 1),
    ("1name == 1", [], 2),
    ("count == nil", [], 10),
    ("%K == 1", [5], 1),
    ("count == % 5", [], 10),
    ("count == 5 count == 6", [], 12),
    ("ANY tags == 'x'", [], 5),
]

@Test(arguments: validCases.indices)
func validPredicateParsesAndEvaluates(index: Int) throws {
    let (format, arguments, expected) = validCases[index]
    let predicate = try QueryPredicate(format: format, argumentArray: arguments)
    #expect(predicate.evaluate(with: sample) == expected, "\(format)")
}

@Test(arguments: invalidCases.indices)
func invalidPredicateNamesPosition(index: Int) {
    let (format, arguments, position) = invalidCases[index]
    do {
        _ = try QueryPredicate(format: format, argumentArray: arguments)
        Issue.record("'\(format)' parsed, but should have failed")
    } catch let error as StoreError {
        #expect(error.code == .invalidArguments, "\(format)")
        if position > 0 {
            #expect(error.message.contains("at character \(position):"), "\(format): \(error.message)")
        } else {
            #expect(error.message.contains("arguments"), "\(format): \(error.message)")
        }
    } catch {
        Issue.record("'\(format)' threw \(error), not a StoreError")
    }
}

@Test func parserCaseCountIsAtLeastSixty() {
    #expect(validCases.count + invalidCases.count >= 60)
}

@Test func deeplyNestedPredicateIsRefusedNotCrashing() {
    let format = String(repeating: "(", count: 5_000) + "count == 1" + String(repeating: ")", count: 5_000)
    #expect(throws: StoreError.self) { try QueryPredicate(format: format) }
    let nots = String(repeating: "NOT ", count: 5_000) + "count == 1"
    #expect(throws: StoreError.self) { try QueryPredicate(format: nots) }
}
