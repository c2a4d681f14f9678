import ArgumentParser
import FatchatCore
import Foundation
import RecordStore

/// What the first frame needs, loaded: the channel list and the newest messages of the first channel.
struct FirstFrameData {
    var channels: [Channel]
    var page: MessagePage
}

/// THE SEAM for `TerminalUI`: render `data` into the headless screen model and return the cell count drawn.
///
/// The full-screen client is being built in parallel and is not merged yet, so
/// this returns `nil` and first-frame figures do not include rendering. When
/// `TerminalUI` lands, build its screen model here (e.g. 120×40), draw the
/// channel list and the page into it, and return what was drawn.
func renderFirstFrame(_ data: FirstFrameData) -> Int? {
    nil
}

/// Opens the container and loads the first frame's data, then prints the time it was ready and its memory.
struct FirstFrameChild: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "first-frame")
    @OptionGroup var store: ChildStore
    @Option(help: "How long to let the started engine run before reading memory again.")
    var settle = 0.5

    func run() throws {
        let start = Clock.monotonic()
        let container = try store.open()
        let opened = Clock.monotonic()
        let client = try ChatClient(container: container, handle: "frame")
        let created = Clock.monotonic()
        let channels = try client.channels()
        guard let first = channels.first else { throw BenchError("The container has no channel to show.") }
        let page = try client.messages(in: first.name, limit: 50)
        let loaded = Clock.monotonic()
        let drawn = renderFirstFrame(FirstFrameData(channels: channels, page: page))
        say("frame \(Clock.realtime())")
        let atFrame = memoryMB()
        func ms(_ a: UInt64, _ b: UInt64) -> String { String(format: "%.2f", Double(b - a) / 1e6) }
        say("breakdown open=\(ms(start, opened)) client=\(ms(opened, created)) load=\(ms(created, loaded)) rendered=\(drawn.map(String.init) ?? "no") messages=\(page.messages.count) channels=\(channels.count)")
        say("rss \(atFrame.rss) \(atFrame.hwm)")
        // A running client also has its engine going; memory is read again once it settled.
        client.engine.start()
        usleep(UInt32(settle * 1_000_000))
        let running = memoryMB()
        client.engine.stop()
        say("running-rss \(running.rss) \(running.hwm)")
    }
}
