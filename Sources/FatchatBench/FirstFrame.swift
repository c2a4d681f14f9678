import ArgumentParser
import FatchatCore
import Foundation
import RecordStore
import TerminalUI

/// The first frame, as the full-screen client makes it: `ChatScreen` loads the
/// user's channels and the newest page of the first, and renders into the
/// headless screen model (120×40). Returns the frame and the messages it holds.
func renderFirstFrame(_ client: ChatClient) throws -> (screen: Screen, messages: Int, channels: Int) {
    let screen = try ChatScreen(client: client, width: 120, height: 40, renderOptions: RenderOptions(usesColor: false))
    return (screen.render(), screen.state.messages.count, screen.state.channels.count)
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
        let frame = try renderFirstFrame(client)
        let loaded = Clock.monotonic()
        let drawn = frame.screen.lines.reduce(0) { $0 + $1.count }
        say("frame \(Clock.realtime())")
        let atFrame = memoryMB()
        func ms(_ a: UInt64, _ b: UInt64) -> String { String(format: "%.2f", Double(b - a) / 1e6) }
        say("breakdown open=\(ms(start, opened)) client=\(ms(opened, created)) load=\(ms(created, loaded)) rendered=\(drawn) messages=\(frame.messages) channels=\(frame.channels)")
        say("rss \(atFrame.rss) \(atFrame.hwm)")
        // A running client also has its engine going; memory is read again once it settled.
        client.engine.start()
        usleep(UInt32(settle * 1_000_000))
        let running = memoryMB()
        client.engine.stop()
        say("running-rss \(running.rss) \(running.hwm)")
    }
}
