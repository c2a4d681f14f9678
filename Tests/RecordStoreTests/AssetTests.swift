import Foundation
import Testing
@testable import RecordStore

@Suite struct AssetTests {
    @Test func sha256MatchesKnownVectors() {
        var empty = SHA256()
        #expect(empty.finalize() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        var abc = SHA256()
        abc.update(Array("abc".utf8))
        #expect(abc.finalize() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        var long = SHA256()
        long.update(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
        #expect(long.finalize() == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        var million = SHA256()
        million.update([UInt8](repeating: 0x61, count: 1_000_000))
        #expect(million.finalize() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    private func storedFiles(_ container: Container) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: container.url.appendingPathComponent("assets").path)
            .filter { !$0.hasPrefix(".") }.sorted()
    }

    @Test(arguments: TestEngine.available) func sameContentIsStoredOnceAndRemovedWhenUnused(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: engine)
        let db = container.publicDatabase
        let one = dir.path("one.txt")
        let two = dir.path("two.txt")
        try Data("same bytes".utf8).write(to: one)
        try Data("same bytes".utf8).write(to: two)

        var a = Record(recordType: "Attachment")
        a["file"] = .asset(Asset(fileURL: one))
        var b = Record(recordType: "Attachment")
        b["file"] = .asset(Asset(fileURL: two))
        try db.modifyRecords(saving: [a, b], deleting: []).check()
        #expect(try storedFiles(container).count == 1)

        let fetched = try #require(try db.record(for: a.recordID)["file"]?.assetValue)
        #expect(fetched.fileURL.path.hasPrefix(container.url.path))
        #expect(try String(contentsOf: fetched.fileURL, encoding: .utf8) == "same bytes")
        try FileManager.default.removeItem(at: one)
        #expect(try String(contentsOf: fetched.fileURL, encoding: .utf8) == "same bytes")

        try db.deleteRecord(withID: a.recordID)
        #expect(try storedFiles(container).count == 1, "b still uses the content")
        try db.deleteRecord(withID: b.recordID)
        #expect(try storedFiles(container).isEmpty)
    }

    @Test(arguments: TestEngine.available) func replacingAnAssetRemovesTheOldFile(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: engine)
        let db = container.publicDatabase
        let first = dir.path("first")
        let second = dir.path("second")
        try Data("first".utf8).write(to: first)
        try Data("second".utf8).write(to: second)
        var record = Record(recordType: "Attachment")
        record["file"] = .asset(Asset(fileURL: first))
        var saved = try db.save(record)
        #expect(try storedFiles(container).count == 1)

        // Saving a fetched copy again keeps its stored asset as it is.
        saved["note"] = "unchanged asset"
        saved = try db.save(saved)
        #expect(try storedFiles(container).count == 1)

        saved["file"] = .asset(Asset(fileURL: second))
        let updated = try db.save(saved)
        let files = try storedFiles(container)
        #expect(files == [try #require(updated["file"]?.assetValue?.contentHash)])
    }

    @Test(arguments: TestEngine.available) func aMissingSourceFileIsAssetFileNotFound(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let db = try dir.container(engine: engine).publicDatabase
        var record = Record(recordType: "Attachment")
        record["file"] = .asset(Asset(fileURL: dir.path("does-not-exist")))
        let error = #expect(throws: StoreError.self) { try db.save(record) }
        #expect(error?.code == .assetFileNotFound)
        #expect(error?.message.contains("does-not-exist") == true)
    }

    @Test(arguments: TestEngine.available) func listsOfAssetsAreStored(engine: TestEngine) throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container(engine: engine)
        let db = container.publicDatabase
        let urls = try (0..<3).map { i -> URL in
            let url = dir.path("file\(i)")
            try Data("content \(i)".utf8).write(to: url)
            return url
        }
        var record = Record(recordType: "Album")
        record["photos"] = .list(urls.map { .asset(Asset(fileURL: $0)) })
        try db.save(record)
        let photos = try db.record(for: record.recordID)["photos"]?.listValue?.compactMap(\.assetValue) ?? []
        #expect(photos.count == 3)
        #expect(try photos.map { try String(contentsOf: $0.fileURL, encoding: .utf8) } == ["content 0", "content 1", "content 2"])
        #expect(try storedFiles(container).count == 3)
    }
}
