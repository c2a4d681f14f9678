import FatchatCore
import Foundation
import GRDB
import RecordStore

/// What a seeded container holds, saved beside it so later runs can reuse it.
struct SeedInfo: Codable, Sendable {
    var messages: Int
    var channels: Int
    var membersPerChannel: Int
    /// A word in about one message in a thousand, for the token search.
    var rareToken: String
    var channelNames: [String]
}

/// Fills a container with channels, memberships and messages through the public API.
struct Seeder {
    let url: URL
    let privateDirectory: URL
    let messages: Int
    let channels: Int
    /// Creation dates are spread over this many seconds before now.
    var spread: Double = 365 * 86_400
    /// Seed the `postgresql` engine on this database instead of a single file.
    var postgresURL: String? = nil

    static let rareToken = "zebrafish"
    static let membersPerChannel = 10
    private var infoURL: URL { url.appendingPathComponent("bench-seed.json") }

    /// The container's seed info if it already holds the requested seed.
    func existing() -> SeedInfo? {
        guard let data = try? Data(contentsOf: infoURL),
              let info = try? JSONDecoder().decode(SeedInfo.self, from: data),
              info.messages == messages, info.channels == channels,
              let count = try? (postgresURL == nil ? Self.messageCount(url) : serverMessageCount()) else { return nil }
        return count == messages ? info : nil
    }

    /// Counts message records with plain SQL on a read-only connection.
    static func messageCount(_ url: URL) throws -> Int {
        let queue = try HandSQL.open(url)
        return try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM record WHERE type = 'Message'") ?? 0 }
    }

    /// Counts message records on the server through the container.
    private func serverMessageCount() throws -> Int {
        let container = try Container(url: url, options: Container.Options(create: false, privateDataDirectory: privateDirectory, naming: .fatchat))
        return try container.publicDatabase.countRecords(matching: Query(recordType: ChatSchema.messageType))
    }

    /// Seeds a fresh container; returns its info, the records per second of the message saves, and a note.
    func seed() throws -> (info: SeedInfo, recordsPerSecond: Double, note: String) {
        if FileManager.default.fileExists(atPath: url.path) {
            try FileManager.default.removeItem(at: url)
        }
        let container = try BenchContainer.make(at: url, privateData: privateDirectory, postgresURL: postgresURL)
        let client = try ChatClient(container: container, handle: "seeder")
        let database = container.publicDatabase
        var names: [ChannelName] = []
        for c in 0..<channels {
            let name = try ChannelName(String(format: "bench-%03d", c))
            try client.createChannel(name, topic: "Benchmark channel \(c)")
            names.append(name)
        }
        var memberships: [RecordStore.Record] = []
        for name in names {
            for m in 0..<Self.membersPerChannel {
                let user = m == 0 ? container.currentUserRecordID.recordName : "bench-user-\(m)"
                var record = RecordStore.Record(recordType: ChatSchema.membershipType, recordID: RecordID(recordName: "member.\(name.key).\(user)"))
                record["channel"] = .reference(Reference(recordID: RecordID(recordName: name.id.rawValue), action: .deleteSelf))
                record["user"] = .string(user)
                record["handle"] = .string(m == 0 ? "seeder" : "user\(m)")
                memberships.append(record)
            }
        }
        for start in stride(from: 0, to: memberships.count, by: RecordDatabase.maximumBatchSize) {
            try Self.check(try database.modifyRecords(saving: Array(memberships[start..<min(start + RecordDatabase.maximumBatchSize, memberships.count)]), deleting: []))
        }

        if let postgresURL {
            // Through modifyRecords the server takes a few hundred records a second here, so a million would take
            // the best part of an hour: the messages go in by SQL, shaped as the engine stores them.
            let (ms, _) = try Clock.measure {
                try RawPostgres(url: postgresURL).bulkMessages(count: messages, channels: names.map { ($0.id.rawValue, $0.display) },
                                                               creator: container.currentUserRecordID.recordName, rareToken: Self.rareToken, spread: spread)
            }
            let info = SeedInfo(messages: messages, channels: channels, membersPerChannel: Self.membersPerChannel,
                                rareToken: Self.rareToken, channelNames: names.map(\.display))
            try JSONEncoder().encode(info).write(to: infoURL)
            return (info, Double(messages) / (ms / 1000), "Inserted \(messages) messages on the server with SQL shaped as the engine stores them (fields, creator, dates over the past year, search text, reference rows; no change rows) in \(String(format: "%.1f", ms / 1000)) s: not the engine's seeding rate.")
        }
        var generator = TextGenerator()
        let bar = ProgressBar()
        let started = Clock.monotonic()
        var batch: [RecordStore.Record] = []
        batch.reserveCapacity(RecordDatabase.maximumBatchSize)
        for i in 0..<messages {
            let channel = names[generator.channel(for: i, of: channels)]
            batch.append(Self.message(text: generator.text(for: i), handle: "user\(i % Self.membersPerChannel)", in: channel))
            if batch.count == RecordDatabase.maximumBatchSize || i == messages - 1 {
                try Self.check(try database.modifyRecords(saving: batch, deleting: []))
                batch.removeAll(keepingCapacity: true)
                bar.update(Double(i + 1) / Double(messages), "seeded \(i + 1) of \(messages) messages")
            }
        }
        bar.end()
        let seconds = Double(Clock.monotonic() - started) / 1e9
        let backdate = try Clock.measure { try backdateMessages() }
        let info = SeedInfo(messages: messages, channels: channels, membersPerChannel: Self.membersPerChannel,
                            rareToken: Self.rareToken, channelNames: names.map(\.display))
        try JSONEncoder().encode(info).write(to: infoURL)
        let note = "Seeded \(messages) messages in \(String(format: "%.1f", seconds)) s through modifyRecords, 400 per call (one transaction each). "
            + "RecordStore stamps creationDate itself, so the harness then spread the dates over the past year with one SQL UPDATE (\(String(format: "%.1f", backdate.ms / 1000)) s, not counted), keeping insertion order."
        return (info, Double(messages) / seconds, note)
    }

    /// A message record as `FatchatCore`'s `Message.record` builds it (that builder is internal to the module).
    static func message(text: String, handle: String, in channel: ChannelName) -> RecordStore.Record {
        var record = RecordStore.Record(recordType: ChatSchema.messageType, recordID: RecordID(recordName: recordName()))
        record["channel"] = .reference(Reference(recordID: RecordID(recordName: channel.id.rawValue), action: .deleteSelf))
        record["channelName"] = .string(channel.display)
        record["text"] = .string(text)
        record["handle"] = .string(handle)
        return record
    }

    /// 16 random hex digits, as a seeded message's name (String(format:) cost the seeding figure 3 % of its time:
    /// the harness's, not the store's).
    static func recordName() -> String {
        let hex = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    private static func check(_ result: ModifyResult) throws {
        for (id, outcome) in result.saveResults {
            if case .failure(let error) = outcome { throw BenchError("Seeding failed at \(id): \(error)") }
        }
    }

    /// Spreads message creation dates evenly over `spread` seconds ending now, in row order.
    private func backdateMessages() throws {
        var config = Configuration()
        config.busyMode = .timeout(30)
        let queue = try DatabaseQueue(path: url.appendingPathComponent("public.sqlite").path, configuration: config)
        try queue.write { db in
            let bounds = try Row.fetchOne(db, sql: "SELECT min(id) AS lo, max(id) AS hi FROM record WHERE type = 'Message'")
            guard let lo: Int64 = bounds?["lo"], let hi: Int64 = bounds?["hi"], hi > lo else { return }
            let now = Date().timeIntervalSince1970
            let step = spread / Double(hi - lo)
            try db.execute(sql: "UPDATE record SET created = ? - (? - id) * ?, modified = ? - (? - id) * ? WHERE type = 'Message'",
                           arguments: [now, hi, step, now, hi, step])
        }
    }
}

/// Deterministic message texts: a few words from a fixed vocabulary, and a rare token now and then.
struct TextGenerator {
    private var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    private let vocabulary: [String] = {
        let onsets = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "ch", "st"]
        let vowels = ["a", "e", "i", "o", "u", "ai", "ou"]
        var words: [String] = []
        for a in onsets { for v in vowels { for b in onsets.prefix(9) { words.append(a + v + b) } } }
        return words
    }()

    private mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 33
    }

    /// Which channel message `i` goes to: uneven, so some channels are busier.
    mutating func channel(for i: Int, of count: Int) -> Int {
        let r = Int(next() % UInt64(count * 2))
        return r < count ? r : Int(next() % UInt64(max(1, count / 10)))
    }

    mutating func text(for i: Int) -> String {
        var words: [String] = []
        for _ in 0..<(4 + Int(next() % 8)) { words.append(vocabulary[Int(next() % UInt64(vocabulary.count))]) }
        if i % 1000 == 500 { words.insert(Seeder.rareToken, at: words.count / 2) }
        return words.joined(separator: " ")
    }
}
