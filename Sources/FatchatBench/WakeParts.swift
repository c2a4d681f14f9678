import ArgumentParser
import FatchatCore
import Foundation
import RecordStore

/// The parts of a receiver's wake-up, each timed alone in a loop: what one delivery costs before the event.
struct WakeParts: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "wake-parts", abstract: "Times the parts of a wake-up, one at a time.")
    @OptionGroup var store: ChildStore
    @Option var runs = 2000

    func run() throws {
        let container = try store.open()
        let database = container.publicDatabase
        let channel = try ChannelName("bench-wake")
        _ = try ChatClient(container: container, handle: "sender").createChannel(channel)
        let signal = try database.makeChangeSignal()
        func time(_ label: String, _ body: () throws -> Void) rethrows {
            var samples: [Double] = []
            for _ in 0..<runs {
                let start = Clock.monotonic()
                try body()
                samples.append(Double(Clock.monotonic() - start) / 1e3)
            }
            say("\(label): p50 \(Report.format(median(samples))) µs")
        }
        _ = try signal.hasChanged()
        try time("data_version, unchanged") { _ = try signal.hasChanged() }
        let now = try database.currentChangeToken()
        try time("fetchChanges, nothing new") { _ = try database.fetchChanges(since: now) }
        try time("currentChangeToken") { _ = try database.currentChangeToken() }
        var token = now
        var fetches: [Double] = [], checks: [Double] = [], saves: [Double] = []
        for _ in 0..<runs {
            let record = Seeder.message(text: "t=\(Clock.realtime())", handle: "sender", in: channel)
            var start = Clock.monotonic()
            _ = try database.save(record)
            saves.append(Double(Clock.monotonic() - start) / 1e3)
            start = Clock.monotonic()
            _ = try signal.hasChanged()
            checks.append(Double(Clock.monotonic() - start) / 1e3)
            start = Clock.monotonic()
            let batch = try database.fetchChanges(since: token)
            fetches.append(Double(Clock.monotonic() - start) / 1e3)
            token = batch.token
        }
        say("save one message: p50 \(Report.format(median(saves))) µs")
        say("data_version after a commit: p50 \(Report.format(median(checks))) µs")
        say("fetchChanges of one new message: p50 \(Report.format(median(fetches))) µs")
    }
}
