import Foundation
import Testing
@testable import RecordStore

@Suite struct FieldCodingTests {
    let zone = ZoneID(zoneName: "z")
    let assets = URL(fileURLWithPath: "/tmp/assets")

    private func decode(_ json: String, keys: Set<String>? = nil) throws -> [String: FieldValue] {
        try FieldCoding.decode(json, zone: zone, assetsDirectory: assets, keys: keys)
    }

    @Test func everyTypeAndAwkwardNumberSurvivesEncodeThenDecode() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.123456)
        // A stored asset name must be a SHA-256; anything else is refused on decode.
        let hash = String(repeating: "0f", count: 32)
        let fields: [String: FieldValue] = [
            "text": .string("héllo \"q\" \\ / \n\r\t\u{0}\u{1F} 你好 🍕"),
            "empty": .string(""),
            "max": .int64(.max), "min": .int64(.min), "zero": .int64(0),
            "one": .double(1.0), "tenth": .double(0.1), "tiny": .double(1e-05), "minus": .double(-2.5),
            "huge": .double(.greatestFiniteMagnitude), "subnormal": .double(.leastNonzeroMagnitude),
            "bytes": .bytes(Data([0, 255, 10])), "noBytes": .bytes(Data()),
            "when": .date(date), "epoch": .date(Date(timeIntervalSince1970: 0)),
            "where": .location(Location(latitude: 48.85, longitude: 2.35, altitude: 35, horizontalAccuracy: 5)),
            "plain": .location(Location(latitude: -33.9, longitude: 151.2)),
            "halfway": .location(Location(latitude: 1, longitude: 2, altitude: nil, horizontalAccuracy: 3.5)),
            "parent": .reference(Reference(recordID: RecordID(recordName: "p\"1", zoneID: zone), action: .deleteSelf)),
            "friend": .reference(Reference(recordID: RecordID(recordName: "f", zoneID: zone))),
            "file": .asset(Asset(fileURL: assets.appendingPathComponent(hash), contentHash: hash, size: 42)),
            "tags": ["a", "b"], "numbers": [1, 2, 3], "ratios": [1.0, 2.5], "none": .list([]),
            "refs": .list([.reference(Reference(recordID: RecordID(recordName: "r", zoneID: zone), action: .deleteSelf)),
                           .reference(Reference(recordID: RecordID(recordName: "s", zoneID: zone)))]),
            "places": .list([.location(Location(latitude: 1, longitude: 2)),
                             .location(Location(latitude: 3, longitude: 4, altitude: 5, horizontalAccuracy: nil))]),
        ]
        let decoded = try decode(try FieldCoding.encode(fields))
        #expect(decoded == fields)
        #expect(decoded["one"] == .double(1.0))
        #expect(decoded["max"] == .int64(.max))
    }

    @Test func theTagDecidesBetweenIntegerAndDouble() throws {
        let decoded = try decode(#"{"d":{"t":"d","v":1},"i":{"t":"i","v":9007199254740993},"e":{"t":"d","v":2E3}}"#)
        #expect(decoded["d"] == .double(1))
        #expect(decoded["i"] == .int64(9_007_199_254_740_993))
        #expect(decoded["e"] == .double(2000))
    }

    @Test func readsAnyValidJSONSpellingOfTheSameFields() throws {
        let json = """
             { "s" : { "v" : "caf\\u00e9 \\ud83c\\udf55 a\\/b" , "t" : "s" } ,
              "l":{"t":"L","e":"i","v":[ 1 , -2 ]}, "n": {"t": "t", "v": -1.5e1} }\t
            """
        let decoded = try decode(json)
        #expect(decoded["s"] == .string("café 🍕 a/b"))
        #expect(decoded["l"] == .list([.int64(1), .int64(-2)]))
        #expect(decoded["n"] == .date(Date(timeIntervalSince1970: -15)))
    }

    @Test func keysFilterLeavesOtherFieldsOut() throws {
        let json = try FieldCoding.encode(["a": 1, "b": "two", "c": [3.5]])
        #expect(try decode(json, keys: ["b", "c", "missing"]) == ["b": "two", "c": [3.5]])
        #expect(try decode(json, keys: []) == [:])
    }

    /// A filtered parse steps over the members it leaves out without building them, on a path of its own;
    /// it must refuse exactly the texts the whole parse refuses, and keep exactly the members it would.
    @Test func aFilteredParseRefusesAndKeepsExactlyWhatTheWholeParseDoes() throws {
        for text in try Self.awkwardTexts() {
            let whole = try? StoredJSON.parse(text)
            for keys in [Set<String>(), ["a", "e", "t", "v"]] {
                let filtered = try? StoredJSON.parse(text, keeping: keys)
                #expect((whole == nil) == (filtered == nil), "\(keys) \(text.debugDescription.prefix(200))")
                guard let whole, let filtered else { continue }
                var expected = whole
                if case .object(let members) = whole { expected = .object(members.filter { keys.contains($0.key) }) }
                #expect(String(describing: filtered) == String(describing: expected), "\(keys) \(text.debugDescription.prefix(200))")
            }
        }
    }

    /// A record's fields are read without building each field's object, on a path of their own: it must refuse
    /// exactly what the whole parse refuses (or finds no object in), and find each field's parts where the
    /// whole parse does, the last of each name.
    @Test func fieldPartsAreWhatTheWholeParseFinds() throws {
        let fieldTexts = [
            #"{"a":{"v":1,"t":"i","v":2,"t":"d"},"a":{"t":"s","v":"later"}}"#,
            #"{"a":{"\u0074":"s","\u0076":"escaped keys","other":[1,{"t":"no"}],"x":null,"e":"s"}}"#,
            #"{"a":[{"t":"s","v":"in an array"}],"b":"plain","c":3,"d":{}}"#,
            #"{"a":{"t":"L","e":"i","v":[1,2],"x":[null,{"k":1}]},"b":{"t":{"t":"s"},"v":{"v":1}}}"#,
        ]
        for text in try Self.awkwardTexts() + fieldTexts {
            let whole = try? StoredJSON.parse(text)
            for keys in [nil, Set<String>(), ["a", "b", "t", "v"]] {
                let fields = try? StoredJSON.parseFields(text, keeping: keys)
                guard case .object(let members) = whole else {
                    #expect(fields == nil, "\(text.debugDescription.prefix(200))")
                    continue
                }
                let expected = members.filter { keys?.contains($0.key) ?? true }.map { member in
                    guard case .object = member.value else { return "\(member.key): none" }
                    return "\(member.key): \([member.value["t"], member.value["v"], member.value["x"], member.value["e"]])"
                }
                let found = fields?.map { key, parts in
                    parts.map { "\(key): \([$0.tag, $0.value, $0.extra, $0.element])" } ?? "\(key): none"
                }
                #expect(found == expected, "\(String(describing: keys)) \(text.debugDescription.prefix(200))")
            }
        }
    }

    /// The fuzz corpus of stored fields, and texts made to be awkward: damage and odd spellings in every place.
    private static func awkwardTexts() throws -> [String] {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FuzzCorpus/stored-fields")
        let found = try FileManager.default.contentsOfDirectory(at: corpus, includingPropertiesForKeys: nil)
            .map { String(decoding: try Data(contentsOf: $0), as: UTF8.self) }
        // Damage and awkward spellings inside the members a filter leaves out.
        let made = [
            #"{"a":{"t":"s","v":"x"},"skip":{"t":"s","v":"é \"q\" \\ \u00e9 \ud83c\udf55"}}"#,
            #"{"a":{"t":"s","v":"x"},"skip":[1,-0.5e+3,true,false,null,{"n":[[]]},"s"]}"#,
            #"{"skip":{"t":"s","v":"\ud800"},"a":{"t":"s","v":"x"}}"#,
            #"{"skip":{"t":"s","v":"\q"},"a":{"t":"s","v":"x"}}"#,
            "{\"skip\":\"tab\there\",\"a\":1}",
            #"{"skip":01,"a":{"t":"s","v":"x"}}"#, #"{"skip":1.,"a":1}"#, #"{"skip":-,"a":1}"#, #"{"skip":1e,"a":1}"#,
            #"{"skip":tru,"a":1}"#, #"{"skip":[1,],"a":1}"#, #"{"skip":{"k" 1},"a":1}"#, #"{"skip":{"k":1,},"a":1}"#,
            #"{"skip":"unterminated}"#, #"{"skip":[1"#, #"{"skip":{"#, #"{"skip":"\u12"}"#,
            String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
            #"{"a":1,"skip":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}",
            #"{"a":1,"skip":"# + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}",
            // Objects nested to the limit and past it, inside a field's value: each level is a few frames deep.
            #"{"a":{"t":"s","v":"# + String(repeating: #"{"k":"#, count: 508) + "1" + String(repeating: "}", count: 508) + "}}",
            #"{"a":{"t":"s","v":"# + String(repeating: #"{"k":"#, count: 600) + "1" + String(repeating: "}", count: 600) + "}}",
        ]
        #expect(found.count > 100, "the corpus was not found at \(corpus.path)")
        return found + made
    }

    @Test(arguments: [
        ("", "not valid JSON"), ("not json", "not valid JSON"), ("[]", "not valid JSON"),
        (#"{"a":{"t":"s","v":"x"}} x"#, "not valid JSON"), (#"{"a":{"t":"s","v":"x}}"#, "not valid JSON"),
        (#"{"a":{"t":"i","v":01}}"#, "not valid JSON"), (#"{"a":{"t":"s","v":"\ud800"}}"#, "not valid JSON"),
        (#"{"a":1}"#, "has no type"), (#"{"a":{"v":1}}"#, "has no type"),
        (#"{"a":{"t":"i","v":"x"}}"#, "does not fit its type 'i'"), (#"{"a":{"t":"l","v":[1]}}"#, "does not fit its type 'l'"),
        (#"{"a":{"t":"b","v":"%%%"}}"#, "does not fit its type 'b'"), (#"{"a":{"t":"L","e":"s","v":[1]}}"#, "does not fit its type 's'"),
        (#"{"a":{"t":"?","v":1}}"#, "does not fit its type '?'"), (#"{"a":{"t":"d"}}"#, "does not fit its type 'd'"),
    ])
    func damagedFieldsAreABadDatabase(json: String, message: String) {
        do {
            _ = try decode(json)
            Issue.record("decoded damaged fields \(json)")
        } catch let error as StoreError {
            #expect(error.code == .badDatabase)
            #expect(error.description.contains(message))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    /// A date is settled by arithmetic to what trips through its stored text would make it: what a reader holds,
    /// which comes back from its text unchanged, so the record a writer hands back is the one a reader decodes.
    @Test func aSettledDateIsWhatTripsThroughTheStoredTextMakeIt() throws {
        func text(_ date: Date) throws -> String { try FieldCoding.encode(["d": .date(date)]) }
        func read(_ text: String) throws -> Date { try #require(try decode(text)["d"]?.dateValue) }
        /// Trips through the text until the text stays the same.
        func tripped(_ date: Date) throws -> Date {
            var current = date
            var stored = try text(current)
            for _ in 0..<4 {
                let next = try read(stored)
                let again = try text(next)
                current = next
                if again == stored { break }
                stored = again
            }
            return current
        }
        var generator = SeededGenerator(seed: 20261207)
        let awkward = [0, 1e-7, -1e-7, 978_307_200.000_000_1, 1_800_000_000.123_456_7, -62_135_596_800, 253_402_300_799]
            .map { Date(timeIntervalSince1970: $0) }
        let dates = awkward + (0..<20_000).map { _ in
            Date(timeIntervalSinceReferenceDate: Double.random(in: 5e8...1e9, using: &generator))
        }
        var moved = 0
        for date in dates {
            let settled = RecordSignature.settled(date)
            #expect(settled.timeIntervalSinceReferenceDate.bitPattern == (try tripped(date)).timeIntervalSinceReferenceDate.bitPattern, "\(date.timeIntervalSinceReferenceDate)")
            let stored = try text(settled)
            #expect(try read(stored).timeIntervalSinceReferenceDate.bitPattern == settled.timeIntervalSinceReferenceDate.bitPattern)
            #expect(try text(date) == stored, "settling changes what a reader holds, never the text that is signed")
            if settled.timeIntervalSinceReferenceDate.bitPattern != date.timeIntervalSinceReferenceDate.bitPattern { moved += 1 }
        }
        #expect(moved > 0, "some dates do come back from a trip moved, so settling them is tested")
    }
}
