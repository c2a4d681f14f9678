import Foundation
import Testing
@testable import RecordStore

/// The record rules at replay: the same records on every client, whatever order the logs are read in.
struct LogReplayTests {
    let aliceA = UUID(), aliceB = UUID(), bobA = UUID()
    let alice = LogFixture.alice, bob = LogFixture.bob

    func channel(_ name: String, by account: String, client: UUID, at time: UInt64, topic: String = "") throws -> LogEntry {
        try LogFixture.save(name, by: account, client: client, at: time, type: "Channel", fields: ["topic": .string(topic)])
    }

    func message(_ name: String, in channel: String, by account: String, client: UUID, at time: UInt64, text: String = "hi") throws -> LogEntry {
        try LogFixture.save(name, by: account, client: client, at: time, type: "Message", fields: [
            "channel": .reference(Reference(recordID: RecordID(recordName: channel), action: .deleteSelf)), "text": .string(text),
        ])
    }

    /// Applies each ordering to a fresh cache, one entry per poll, and returns the snapshots.
    func snapshots(_ orders: [[LogEntry]]) throws -> [[String]] {
        try orders.map { order in
            let directory = try TemporaryDirectory()
            let cache = try LogFixture.cache(in: directory)
            for entry in order { try LogFixture.apply([entry], to: cache) }
            return try LogFixture.snapshot(cache)
        }
    }

    /// Every ordering of a few entries.
    func permutations<T>(_ items: [T]) -> [[T]] {
        guard let first = items.first else { return [[]] }
        return permutations(Array(items.dropFirst())).flatMap { rest in
            (0...rest.count).map { index in var copy = rest; copy.insert(first, at: index); return copy }
        }
    }

    @Test("Only the creator's saves count: someone else's save of the record is ignored and counted, in either order")
    func onlyTheCreatorChangesARecord() throws {
        let original = try channel("channel.x", by: alice, client: aliceA, at: 10, topic: "alice's")
        let takeover = try channel("channel.x", by: bob, client: bobA, at: 20, topic: "bob's")
        let theftOfDelete = LogFixture.delete("channel.x", by: bob, client: bobA, at: 30)
        for order in permutations([original, takeover, theftOfDelete]) {
            let directory = try TemporaryDirectory()
            let cache = try LogFixture.cache(in: directory)
            for entry in order { try LogFixture.apply([entry], to: cache) }
            let snapshot = try LogFixture.snapshot(cache)
            #expect(snapshot.count == 1)
            #expect(snapshot.first?.contains("alice's") == true)
            #expect(snapshot.first?.contains(alice) == true)
            #expect(try LogFixture.ignoredCount(cache) == 2)
        }
    }

    @Test("One creator's two clients are ordered by their clocks, ties by client ID, whichever log is read first")
    func clocksOrderOneCreatorsClients() throws {
        let early = try channel("channel.y", by: alice, client: aliceA, at: 50, topic: "early")
        let late = try channel("channel.y", by: alice, client: aliceB, at: 60, topic: "late")
        let results = try snapshots(permutations([early, late]))
        #expect(Set(results).count == 1)
        #expect(results.first?.first?.contains("late") == true)

        let tieA = try channel("channel.z", by: alice, client: aliceA, at: 70, topic: "A")
        let tieB = try channel("channel.z", by: alice, client: aliceB, at: 70, topic: "B")
        let winner = aliceA.uuidString > aliceB.uuidString ? "A" : "B"
        let tied = try snapshots(permutations([tieA, tieB]))
        #expect(Set(tied).count == 1)
        #expect(tied.first?.first?.contains("\"v\":\"\(winner)\"") == true)
    }

    @Test("A message whose channel is deleted after it is gone, even when the delete is read before the message")
    func deleteSelfCascadesInAnyOrder() throws {
        let created = try channel("channel.c", by: alice, client: aliceA, at: 10)
        let posted = try message("m1", in: "channel.c", by: bob, client: bobA, at: 20)
        let deleted = LogFixture.delete("channel.c", by: alice, client: aliceA, at: 30)
        let recreated = try channel("channel.c", by: alice, client: aliceA, at: 40, topic: "again")
        let fresh = try message("m2", in: "channel.c", by: bob, client: bobA, at: 50)
        let results = try snapshots(permutations([created, posted, deleted, recreated, fresh]))
        #expect(Set(results).count == 1)
        let names = results.first?.map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(names == ["channel.c", "m2"])
    }

    @Test("A message read before its channel waits hidden, and shows once the channel arrives")
    func messageWaitsForItsChannel() throws {
        let directory = try TemporaryDirectory()
        let cache = try LogFixture.cache(in: directory)
        try LogFixture.apply([try message("m1", in: "channel.w", by: bob, client: bobA, at: 20)], to: cache)
        #expect(try LogFixture.snapshot(cache).isEmpty)
        try LogFixture.apply([try channel("channel.w", by: alice, client: aliceA, at: 10)], to: cache)
        #expect(try LogFixture.snapshot(cache).count == 2)
        // The change feed saw the channel and the message appear, once each.
        let changes = try cache.read { try $0.changes(after: 0, zone: nil, limit: 100) }
        #expect(changes.rows.map(\.recordID.recordName).sorted() == ["channel.w", "m1"])
        #expect(changes.rows.allSatisfy { $0.kind == .created })
    }

    @Test("Reading the same entries again changes nothing and adds nothing to the change feed")
    func replayIsIdempotent() throws {
        let directory = try TemporaryDirectory()
        let cache = try LogFixture.cache(in: directory)
        let entries = [try channel("channel.i", by: alice, client: aliceA, at: 10), try message("m", in: "channel.i", by: bob, client: bobA, at: 11)]
        try LogFixture.apply(entries, to: cache)
        let before = try LogFixture.snapshot(cache)
        let sequence = try cache.read { try $0.latestSequence() }
        try LogFixture.apply(entries, to: cache)
        try LogFixture.apply(entries.reversed(), to: cache)
        #expect(try LogFixture.snapshot(cache) == before)
        #expect(try cache.read { try $0.latestSequence() } == sequence)
    }

    @Test("Property: random interleavings of several writers' entries, replayed in different orders and batches, converge")
    func randomInterleavingsConverge() throws {
        var generator = SystemRandomNumberGenerator()
        let writers: [(account: String, client: UUID)] = [(alice, aliceA), (alice, aliceB), (bob, bobA), ("_1003_carol", UUID())]
        for round in 0..<12 {
            var entries: [LogEntry] = []
            var time: UInt64 = 1
            for _ in 0..<40 {
                let writer = writers[Int.random(in: 0..<writers.count, using: &generator)]
                time += UInt64.random(in: 0...2, using: &generator)
                let channelName = "channel.\(Int.random(in: 0..<3, using: &generator))"
                switch Int.random(in: 0..<10, using: &generator) {
                case 0...2:
                    entries.append(try channel(channelName, by: writer.account, client: writer.client, at: time, topic: "t\(time)"))
                case 3:
                    entries.append(LogFixture.delete(channelName, by: writer.account, client: writer.client, at: time))
                case 4...7:
                    entries.append(try message("m\(Int.random(in: 0..<8, using: &generator))", in: channelName, by: writer.account,
                                               client: writer.client, at: time, text: "x\(time)"))
                default:
                    entries.append(LogFixture.delete("m\(Int.random(in: 0..<8, using: &generator))", by: writer.account, client: writer.client, at: time))
                }
            }
            // Two entries of one client at one clock reading cannot happen; keep the first.
            var seenStamps: Set<String> = []
            entries = entries.filter { seenStamps.insert("\($0.recordID.recordName) \($0.stamp.time.rawValue) \($0.client)").inserted }
            // Each writer's entries stay in their own order, as in its log; the logs interleave at random.
            var orders: [[LogEntry]] = []
            for _ in 0..<4 {
                var queues = writers.map { writer in entries.filter { $0.client == writer.client } }
                var order: [LogEntry] = []
                while queues.contains(where: { !$0.isEmpty }) {
                    let pick = queues.indices.filter { !queues[$0].isEmpty }.randomElement(using: &generator) ?? 0
                    order.append(queues[pick].removeFirst())
                }
                orders.append(order)
            }
            orders.append(entries.shuffled(using: &generator))
            var results: [[String]] = []
            for (index, order) in orders.enumerated() {
                let directory = try TemporaryDirectory()
                let cache = try LogFixture.cache(in: directory)
                // Polls of different sizes: one entry, a few, or all at once.
                let batch = [1, 3, 7, order.count, 2][index % 5]
                var start = 0
                while start < order.count {
                    try LogFixture.apply(Array(order[start..<min(order.count, start + batch)]), to: cache)
                    start += batch
                }
                results.append(try LogFixture.snapshot(cache))
            }
            #expect(Set(results).count == 1, "round \(round): \(results.map(\.count))")
        }
    }
}
