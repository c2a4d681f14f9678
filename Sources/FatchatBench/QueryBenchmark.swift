import FatchatCore
import Foundation
import RecordStore

/// Newest 50, a cursor page deep in the history, and a token search, each against hand-written SQL on the same file.
struct QueryBenchmark {
    let container: Container
    let info: SeedInfo
    /// Repetitions of each timed query.
    let runs: Int
    /// Which page of 50 the deep page is (reached by keyset, page 1 is the newest).
    let depth: Int
    /// The same container opened again with the same private data, as the user's next process would.
    let reopen: () throws -> Container

    func run(into report: inout Report) throws {
        let warmed = Self.readThrough(container.url.appendingPathComponent("public.sqlite"))
        report.notes.append("Queries: the database file (\(Report.format(warmed)) MB) was read once beforehand, so that both sides find it in the page cache; without that, pages that were evicted come from disk on first touch for both.")
        let client = try ChatClient(container: container, handle: "bench")
        let hand = try HandSQL(container: container.url)
        let names = try info.channelNames.map { try ChannelName($0) }
        guard let busiest = names.first else { throw BenchError("The seeded container has no channels.") }

        // Warm both paths up once, so neither pays for the first page-cache fill.
        _ = try client.messages(in: busiest, limit: 50)
        _ = try hand.messages(channelRecordName: busiest.id.rawValue, after: nil)

        var store: [Double] = [], handTimes: [Double] = []
        for r in 0..<runs {
            let name = names[r % names.count]
            store.append(try Clock.measure { try client.messages(in: name, limit: 50) }.ms)
            handTimes.append(try Clock.measure { try hand.messages(channelRecordName: name.id.rawValue, after: nil) }.ms)
        }
        report.add(Figure(id: "query.newest50", label: "newest 50 of a channel (p50)", value: median(store), unit: "ms",
                          baseline: median(handTimes), baselineLabel: "hand SQL", target: .atMost(2, "ms"),
                          distribution: Distribution(store), runs: runs,
                          note: "Hand SQL plan: " + (try hand.newestPlan(channelRecordName: busiest.id.rawValue)).joined(separator: "; ")))

        try walk(client: client, hand: hand, channel: busiest, into: &report)

        var searchStore: [Double] = [], searchHand: [Double] = []
        var hits = 0
        for _ in 0..<max(1, runs / 4) {
            let (ms, found) = try Clock.measure { try client.search(info.rareToken, limit: 50) }
            searchStore.append(ms)
            hits = found.count
            searchHand.append(try Clock.measure { try hand.search(token: info.rareToken) }.ms)
        }
        report.add(Figure(id: "query.search", label: "token search, newest 50 hits (p50)", value: median(searchStore), unit: "ms",
                          baseline: median(searchHand), baselineLabel: "hand SQL + FTS5", distribution: Distribution(searchStore),
                          runs: searchStore.count, note: "Searched '\(info.rareToken)' (in about 1 message in 1000; \(hits) returned). No target in the issues."))
    }

    /// Reads a file to its end, so that the kernel caches it; returns its size in MB.
    private static func readThrough(_ url: URL) -> Double {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return 0 }
        defer { try? handle.close() }
        var bytes = 0
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty { bytes += chunk.count }
        return Double(bytes) / 1_048_576
    }

    /// What one walk back through a channel measured.
    private struct Walk {
        var pageTimes: [Double] = []
        var handPageTimes: [Double] = []
        var page = 1
        var deepCursor: HistoryCursor?
        var deepKeyset: (created: Double, id: Int64)?
    }

    /// Pages back through the busiest channel by cursor, timing every page, then re-times the deepest page;
    /// then walks it again in a new client with the same private data, whose signature verdicts are kept.
    private func walk(client: ChatClient, hand: HandSQL, channel: ChannelName, into report: inout Report) throws {
        let walk = try pages(client: client, hand: hand, channel: channel)
        guard let deepCursor = walk.deepCursor, let deepKeyset = walk.deepKeyset else {
            report.notes.append("The cursor walk was skipped: \(channel) has a single page of messages.")
            return
        }
        let (pageTimes, handPageTimes, page) = (walk.pageTimes, walk.handPageTimes, walk.page)
        let walked = Distribution(pageTimes)
        report.add(Figure(id: "query.cursorPage", label: "each cursor page, p99 over \(pageTimes.count) pages", value: walked.p99, unit: "ms",
                          baseline: Distribution(handPageTimes).p99, baselineLabel: "hand SQL keyset", target: .atMost(2, "ms"),
                          distribution: walked, runs: pageTimes.count,
                          note: "Walked \(channel) from page 2 to page \(page) by cursor, the store and hand SQL taking turns to read a page first; max \(Report.format(walked.max)) ms."))

        var deep: [Double] = [], deepHand: [Double] = []
        for _ in 0..<runs {
            deep.append(try Clock.measure { try client.messages(in: channel, limit: 50, older: deepCursor) }.ms)
            deepHand.append(try Clock.measure { try hand.messages(channelRecordName: channel.id.rawValue, after: deepKeyset) }.ms)
        }
        let label = page < depth ? "page \(page) of 50 (the last; \(depth) asked)" : "page \(page) of 50"
        report.add(Figure(id: "query.deepPage", label: "deep cursor page, \(label) (p50)", value: median(deep), unit: "ms",
                          baseline: median(deepHand), baselineLabel: "hand SQL keyset", target: .atMost(2, "ms"),
                          distribution: Distribution(deep), runs: runs))

        let again = try pages(client: ChatClient(container: reopen(), handle: "bench"), hand: hand, channel: channel)
        let walkedAgain = Distribution(again.pageTimes)
        report.add(Figure(id: "query.cursorPageAgain", label: "each cursor page again, next process, p99 over \(again.pageTimes.count) pages",
                          value: walkedAgain.p99, unit: "ms", baseline: Distribution(again.handPageTimes).p99, baselineLabel: "hand SQL keyset",
                          distribution: walkedAgain, runs: again.pageTimes.count,
                          note: "The same walk by a new client with the same private data: each signature's verdict is kept from the first walk, so none is verified again."))
    }

    /// One walk back through a channel, page by page, timing the store's page and hand SQL's.
    private func pages(client: ChatClient, hand: HandSQL, channel: ChannelName) throws -> Walk {
        var walk = Walk()
        var cursor: HistoryCursor?
        var keyset: (created: Double, id: Int64)?
        let first = try client.messages(in: channel, limit: 50)
        cursor = first.older
        keyset = try hand.messages(channelRecordName: channel.id.rawValue, after: nil).last.map { ($0.created, $0.id) }
        while walk.page < depth, let current = cursor, let currentKeyset = keyset {
            walk.page += 1
            let page = walk.page
            walk.deepCursor = current
            walk.deepKeyset = currentKeyset
            // The first reader of a page may fetch it from disk; alternate who goes first.
            let handPage = { try Clock.measure { try hand.messages(channelRecordName: channel.id.rawValue, after: currentKeyset) } }
            let handFirst = page.isMultiple(of: 2) ? nil : try handPage()
            let (ms, result) = try Clock.measure { try client.messages(in: channel, limit: 50, older: current) }
            let (handMs, rows) = try handFirst ?? handPage()
            walk.pageTimes.append(ms)
            cursor = result.older
            walk.handPageTimes.append(handMs)
            keyset = rows.last.map { ($0.created, $0.id) }
            if result.messages.count != rows.count {
                throw BenchError("Page \(page) of \(channel): RecordStore returned \(result.messages.count) messages, hand SQL \(rows.count).")
            }
        }
        return walk
    }
}
