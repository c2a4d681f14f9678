import Foundation
import Testing
@testable import RecordStore

/// Fields packed for keeping elsewhere: the store's own text, with bytes and assets beside it by place.
@Suite struct PackedFieldsTests {
    let zone = ZoneID(zoneName: "z")

    @Test func everyKindOfFieldComesBackAsItWentIn() throws {
        let file = URL(fileURLWithPath: "/tmp/not-stored-yet.png")
        let fields: [String: FieldValue] = [
            "text": "a \"quoted\" line\n", "count": .int64(.min), "ratio": .double(0.1),
            "raw": .bytes(Data([0, 255, 10])), "empty": .bytes(Data()),
            "chunks": .list([.bytes(Data([1])), .bytes(Data([2, 3]))]),
            "at": .date(Date(timeIntervalSince1970: 1_700_000_000.25)),
            "where": .location(Location(latitude: 52.5, longitude: 13.4, altitude: 34)),
            "channel": .reference(Reference(recordID: RecordID(recordName: "general", zoneID: zone), action: .deleteSelf)),
            "file": .asset(Asset(fileURL: file)), "files": .list([.asset(Asset(fileURL: file))]),
            "none": .list([]),
        ]
        let packed = try PackedFields(fields)
        // In the order of the keys, as the text names them.
        #expect(packed.bytes == [Data([1]), Data([2, 3]), Data(), Data([0, 255, 10])])
        #expect(packed.assets.count == 2)
        // Bytes are not in the text as base64, and an asset not yet stored needs no hash.
        #expect(!packed.text.contains(Data([0, 255, 10]).base64EncodedString()))
        let restored = try PackedFields(text: packed.text, assets: packed.assets, bytes: packed.bytes).fields(zone: zone)
        #expect(restored == fields)
    }

    @Test func theTextIsTheStoresOwnExceptForWhatIsBeside() throws {
        let fields: [String: FieldValue] = ["text": "hi", "n": 3, "raw": .bytes(Data([9]))]
        let packed = try PackedFields(fields)
        #expect(packed.text == #"{"n":{"t":"i","v":3},"raw":{"t":"b","v":0},"text":{"t":"s","v":"hi"}}"#)
        #expect(packed.bytes == [Data([9])])
    }

    @Test func whatASaveWouldRefuseIsRefusedWhenPacked() {
        for fields: [String: FieldValue] in [["bad-key": 1], ["n": .double(.infinity)], ["l": .list(["a", 1])],
                                               ["l": .list([.list([1])])]] {
            let error = #expect(throws: StoreError.self) { try PackedFields(fields) }
            #expect(error?.code == .invalidArguments, "\(fields)")
        }
    }

    @Test(arguments: [
        ("{not json", [Data](), "not valid JSON"),
        (#"{"text":{"t":"s","v":5}}"#, [], "Stored field 'text' has a value that does not fit its type 's'"),
        (#"{"raw":{"t":"b","v":1}}"#, [Data([1])], "Stored field 'raw' has a value that does not fit its type 'b'"),
        (#"{"raw":{"t":"b","v":-1}}"#, [Data([1])], "does not fit its type 'b'"),
        // One encoding: base64 is the shared file's form of bytes, not this one's.
        (#"{"raw":{"t":"b","v":"AQ=="}}"#, [Data([1])], "does not fit its type 'b'"),
        (#"{"file":{"t":"a","v":0}}"#, [], "does not fit its type 'a'"),
    ])
    func damagedTextIsABadDatabaseThatNamesTheField(text: String, bytes: [Data], message: String) {
        let error = #expect(throws: StoreError.self) { try PackedFields(text: text, assets: [], bytes: bytes).fields(zone: zone) }
        #expect(error?.code == .badDatabase)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    @Test func theStoresOwnTextStillStoresBytesAsBase64AndAssetsByHash() throws {
        let hash = String(repeating: "ab", count: 32)
        let assets = URL(fileURLWithPath: "/tmp/assets")
        let fields: [String: FieldValue] = ["raw": .bytes(Data([1])),
                                            "file": .asset(Asset(fileURL: assets.appendingPathComponent(hash), contentHash: hash, size: 5))]
        let text = try FieldCoding.encode(fields)
        #expect(text == #"{"file":{"t":"a","v":"\#(hash)","x":5},"raw":{"t":"b","v":"AQ=="}}"#)
        #expect(try FieldCoding.decode(text, zone: zone, assetsDirectory: assets) == fields)
    }
}
