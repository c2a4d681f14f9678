import FatchatCore
import Foundation
import RecordStore

/// Newest 50, cursor pages and a token search on a `postgresql` container, each beside the same
/// figure on the single-file container when this run measured it.
struct PostgresQueryBenchmark {
    let container: Container
    let info: SeedInfo
    /// Repetitions of each timed query.
    let runs: Int
    /// Which page of 50 the deep page is (page 1 is the newest).
    let depth: Int

    func run(into report: inout Report) throws {
        let client = try ChatClient(container: container, handle: "bench")
        let names = try info.channelNames.map { try ChannelName($0) }
        guard let busiest = names.first else { throw BenchError("The seeded container has no channels.") }
        let measured = report.figures
        let sqlite = { (id: String) in measured.first { $0.id == id }?.value }
        let scale = "\(info.messages) messages in \(info.channels) channels"

        _ = try client.messages(in: busiest, limit: 50)
        var newest: [Double] = []
        for r in 0..<runs {
            newest.append(try Clock.measure { try client.messages(in: names[r % names.count], limit: 50) }.ms)
        }
        report.add(Figure(id: "query.postgresql.newest50", label: "newest 50 of a channel, postgresql (p50)", value: median(newest), unit: "ms",
                          baseline: sqlite("query.newest50"), baselineLabel: "single file, same run", target: .atMost(3, "ms"),
                          distribution: Distribution(newest), runs: runs, note: "\(scale), through ChatClient.messages over the Unix socket or TCP of the URL."))

        var pages: [Double] = []
        var cursor = try client.messages(in: busiest, limit: 50).older
        var deepest: HistoryCursor?
        var page = 1
        while page < depth, let current = cursor {
            page += 1
            deepest = current
            let (ms, result) = try Clock.measure { try client.messages(in: busiest, limit: 50, older: current) }
            pages.append(ms)
            cursor = result.older
        }
        if let deepest {
            let walked = Distribution(pages)
            report.add(Figure(id: "query.postgresql.cursorPage", label: "each cursor page, postgresql, p99 over \(pages.count) pages", value: walked.p99, unit: "ms",
                              baseline: sqlite("query.cursorPage"), baselineLabel: "single file, same run", target: .atMost(3, "ms"),
                              distribution: walked, runs: pages.count, note: "Walked \(busiest) from page 2 to page \(page) by keyset cursor; max \(Report.format(walked.max)) ms."))
            var deep: [Double] = []
            for _ in 0..<runs { deep.append(try Clock.measure { try client.messages(in: busiest, limit: 50, older: deepest) }.ms) }
            report.add(Figure(id: "query.postgresql.deepPage", label: "deep cursor page, postgresql, page \(page) of 50 (p50)", value: median(deep), unit: "ms",
                              baseline: sqlite("query.deepPage"), baselineLabel: "single file, same run", target: .atMost(3, "ms"),
                              distribution: Distribution(deep), runs: runs))
        } else {
            report.notes.append("The PostgreSQL cursor walk was skipped: \(busiest) has a single page of messages.")
        }

        var search: [Double] = []
        var hits = 0
        for _ in 0..<max(1, runs / 4) {
            let (ms, found) = try Clock.measure { try client.search(info.rareToken, limit: 50) }
            search.append(ms)
            hits = found.count
        }
        report.add(Figure(id: "query.postgresql.search", label: "token search, newest 50 hits, postgresql (p50)", value: median(search), unit: "ms",
                          baseline: sqlite("query.search"), baselineLabel: "single file, same run", distribution: Distribution(search),
                          runs: search.count, note: "Searched '\(info.rareToken)' through tsvector and its GIN index; \(hits) returned."))
    }
}
