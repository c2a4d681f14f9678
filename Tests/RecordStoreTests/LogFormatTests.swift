import Foundation
import Testing
@testable import RecordStore

/// The log file format and its reader: whole entries only, checked, from files anyone could have written.
struct LogFormatTests {
    let client = UUID()
    var header: LogHeader { LogHeader(client: client, account: LogFixture.alice, generation: 3) }

    func sample() throws -> [LogEntry] {
        [
            try LogFixture.save("a", by: LogFixture.alice, client: client, at: 10, fields: ["text": .string("héllo"), "n": .int64(-4)]),
            LogFixture.delete("b", by: LogFixture.alice, client: client, at: 11),
            try LogFixture.save("c", by: LogFixture.alice, client: client, at: 12, fields: ["when": .date(Date(timeIntervalSince1970: 5))]),
        ]
    }

    @Test("Direct reads (O_DIRECT) give the bytes asked for at any offset, and whole entries, though the disk takes only aligned reads")
    func directReads() throws {
        let directory = try TemporaryDirectory()
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        try Data(bytes).write(to: directory.path("raw"))
        let handle = try DirectoryHandle(path: directory.url.path, naming: ContainerNaming())
        guard let fd = try? handle.openRegularFile("raw", direct: true) else {
            // tmpfs before Linux 6.6 refuses O_DIRECT; the reader then opens without it.
            print("skipped: \(directory.url.path) does not take O_DIRECT")
            return
        }
        defer { close(fd) }
        for offset in [0, 1, 4095, 4096, 4097, 8191, 9999, 10_000, 12_000] {
            for count in [1, 100, 5000, 20_000] {
                let read = LogFileReader.read(fd, at: Int64(offset), count: count, direct: true)
                let expected = offset < bytes.count ? Array(bytes[offset..<min(offset + count, bytes.count)]) : []
                #expect((try? read.get()) == expected, "offset \(offset), count \(count)")
            }
        }

        let entries = try sample()
        let log = try LogFixture.bytes(header: header, entries: entries)
        try Data(log).write(to: directory.path("a.log"))
        let logFD = try handle.openRegularFile("a.log", direct: true)
        defer { close(logFD) }
        guard case .success(let (read, size)) = LogFileReader.header(of: logFD, direct: true) else {
            Issue.record("the header did not read back")
            return
        }
        #expect(read == header)
        let scan = LogFileReader.scan(logFD, from: Int64(size), direct: true)
        #expect(scan.entries == entries)
        #expect(scan.stop == LogFileReader.Stop.caughtUp)
        #expect(scan.end == Int64(log.count))
    }

    @Test("A header and entries read back exactly as written")
    func roundTrip() throws {
        let directory = try TemporaryDirectory()
        let entries = try sample()
        let bytes = try LogFixture.bytes(header: header, entries: entries)
        let fd = try LogFixture.file(directory.path("a.log"), bytes)
        defer { close(fd) }
        guard case .success(let (read, size)) = LogFileReader.header(of: fd) else {
            Issue.record("the header did not read back")
            return
        }
        #expect(read == header)
        let scan = LogFileReader.scan(fd, from: Int64(size))
        #expect(scan.entries == entries)
        #expect(scan.stop == LogFileReader.Stop.caughtUp)
        #expect(scan.end == Int64(bytes.count))
        #expect(scan.malformed == 0)
    }

    @Test("A torn tail stops the reader before it; once the entry is whole, reading goes on from there")
    func tornTail() throws {
        let directory = try TemporaryDirectory()
        let entries = try sample()
        let whole = try LogFixture.bytes(header: header, entries: entries)
        let firstTwo = try LogFixture.bytes(header: header, entries: Array(entries.prefix(2)))
        let url = directory.path("torn.log")
        // Every cut inside the third entry must stop after the second.
        for cut in stride(from: firstTwo.count + 1, to: whole.count, by: 7) {
            let fd = try LogFixture.file(url, Array(whole[0..<cut]))
            let scan = LogFileReader.scan(fd, from: Int64(LogFormat.encode(header).count))
            close(fd)
            #expect(scan.entries == Array(entries.prefix(2)), "cut at \(cut)")
            #expect(scan.stop == .incomplete)
            #expect(scan.end == Int64(firstTwo.count))
        }
        let fd = try LogFixture.file(url, Array(whole[0..<(whole.count - 3)]))
        defer { close(fd) }
        let first = LogFileReader.scan(fd, from: Int64(LogFormat.encode(header).count))
        try LogFixture.append(url, Array(whole[(whole.count - 3)...]))
        let second = LogFileReader.scan(fd, from: first.end)
        #expect(second.entries == [entries[2]])
        #expect(second.stop == .caughtUp)
    }

    @Test("A bad checksum stops the reader at that entry, and it reads on once the bytes are right")
    func badChecksum() throws {
        let directory = try TemporaryDirectory()
        let entries = try sample()
        var bytes = try LogFixture.bytes(header: header, entries: entries)
        let good = bytes
        let secondStart = try LogFixture.bytes(header: header, entries: [entries[0]]).count
        bytes[secondStart + LogFormat.framePrefix + 3] ^= 0x40
        let url = directory.path("bad.log")
        let fd = try LogFixture.file(url, bytes)
        let headerSize = Int64(LogFormat.encode(header).count)
        let scan = LogFileReader.scan(fd, from: headerSize)
        close(fd)
        #expect(scan.entries == [entries[0]])
        guard case .bad = scan.stop else {
            Issue.record("expected a bad entry, got \(scan.stop)")
            return
        }
        #expect(scan.end == Int64(secondStart))
        let again = try LogFixture.file(url, good)
        defer { close(again) }
        #expect(LogFileReader.scan(again, from: scan.end).entries == Array(entries.dropFirst()))
    }

    @Test("A length beyond any entry is refused at once, not waited for or allocated")
    func hugeLength() throws {
        let directory = try TemporaryDirectory()
        var bytes = LogFormat.encode(header)
        var frame = ByteWriter()
        frame.u32(UInt32.max)
        frame.u32(0)
        bytes += frame.bytes + [UInt8](repeating: 7, count: 100)
        let fd = try LogFixture.file(directory.path("huge.log"), bytes)
        defer { close(fd) }
        let scan = LogFileReader.scan(fd, from: Int64(LogFormat.encode(header).count))
        #expect(scan.entries.isEmpty)
        #expect(scan.end == Int64(LogFormat.encode(header).count))
        guard case .bad = scan.stop else {
            Issue.record("expected a bad entry, got \(scan.stop)")
            return
        }
    }

    @Test("An entry whose checksum holds but whose contents do not decode is skipped and counted")
    func malformedBodyIsSkipped() throws {
        let directory = try TemporaryDirectory()
        let entries = try sample()
        var bytes = LogFormat.encode(header)
        try LogFormat.encode(entries[0], into: &bytes)
        // A body of a kind that does not exist, checksummed properly.
        let body: [UInt8] = [9, 1, 2, 3]
        var length = ByteWriter()
        length.u32(UInt32(body.count))
        var crc = ByteWriter()
        crc.u32(body.withUnsafeBytes { CRC32C.checksum($0, continuing: CRC32C.checksum(length.bytes)) })
        bytes += length.bytes + crc.bytes + body
        try LogFormat.encode(entries[1], into: &bytes)
        let fd = try LogFixture.file(directory.path("odd.log"), bytes)
        defer { close(fd) }
        let scan = LogFileReader.scan(fd, from: Int64(LogFormat.encode(header).count))
        #expect(scan.entries == [entries[0], entries[1]])
        #expect(scan.malformed == 1)
        #expect(scan.stop == LogFileReader.Stop.caughtUp)
    }

    @Test("Random bytes and random damage never trap the reader, and it never reads past a bad entry")
    func randomDamage() throws {
        let directory = try TemporaryDirectory()
        let entries = try sample()
        let good = try LogFixture.bytes(header: header, entries: entries)
        var generator = SystemRandomNumberGenerator()
        for round in 0..<300 {
            var bytes = good
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            if round % 3 == 0 { bytes = (0..<Int.random(in: 0...400, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) } }
            let fd = try LogFixture.file(directory.path("r.log"), bytes)
            _ = LogFileReader.header(of: fd)
            let scan = LogFileReader.scan(fd, from: Int64(min(bytes.count, 20)))
            close(fd)
            #expect(scan.end <= Int64(bytes.count))
        }
    }

    @Test("CRC-32C matches the published check value")
    func crcCheckValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    }
}
