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
        /// Microseconds `body` took.
        func micros(_ body: () throws -> Void) rethrows -> Double { try Clock.measure(body).ms * 1000 }
        func report(_ label: String, _ samples: [Double]) { say("\(label): p50 \(Report.format(median(samples))) µs") }
        _ = try signal.hasChanged()
        report("data_version, unchanged", try (0..<runs).map { _ in try micros { _ = try signal.hasChanged() } })
        let now = try database.currentChangeToken()
        report("fetchChanges, nothing new", try (0..<runs).map { _ in try micros { _ = try database.fetchChanges(since: now) } })
        report("currentChangeToken", try (0..<runs).map { _ in try micros { _ = try database.currentChangeToken() } })
        var token = now
        var fetches: [Double] = [], checks: [Double] = [], saves: [Double] = []
        for _ in 0..<runs {
            let record = Seeder.message(text: "t=\(Clock.realtime())", handle: "sender", in: channel)
            saves.append(try micros { _ = try database.save(record) })
            checks.append(try micros { _ = try signal.hasChanged() })
            fetches.append(try micros { token = try database.fetchChanges(since: token).token })
        }
        report("save one message", saves)
        report("data_version after a commit", checks)
        report("fetchChanges of one new message", fetches)
    }
}
