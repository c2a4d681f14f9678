import ArgumentParser
import FatchatCore
import Foundation
import RecordStore
import TerminalUI

/// The first frame, as the full-screen client makes it: `ChatScreen` loads the
/// user's channels and the newest page of the first, and renders into the
/// headless screen model (120×40). Returns the frame and the messages it holds.
func renderFirstFrame(_ client: ChatClient) throws -> (screen: Screen, messages: Int, channels: Int, client: ChatScreen) {
    let screen = try ChatScreen(client: client, width: 120, height: 40, renderOptions: RenderOptions(usesColor: false))
    return (screen.render(), screen.state.messages.count, screen.state.channels.count, screen)
}

/// Enter to my own message on screen: from the Enter key to the rendered frame that shows it
/// (the outbox commit included), over `runs` messages; and a render alone, as the baseline.
func measureEnterToScreen(_ screen: ChatScreen, runs: Int) -> (enter: [Double], render: [Double]) {
    var enter: [Double] = [], render: [Double] = []
    for run in 0..<runs {
        let text = "enter to screen \(run)"
        for character in text { screen.handle(.key(.character(character))) }
        let start = Clock.monotonic()
        screen.handle(.key(.enter))
        let frame = screen.render()
        let shown = Clock.monotonic()
        if frame.lines.contains(where: { $0.contains(text) }) { enter.append(Double(shown - start) / 1e6) }
        let renderStart = Clock.monotonic()
        _ = screen.render()
        render.append(Double(Clock.monotonic() - renderStart) / 1e6)
    }
    return (enter, render)
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
        say("frame \(Clock.realtime())")
        let atFrame = memoryMB()
        // As the app does just after its first frame: a start that opened the remembered channel reads the list now.
        frame.client.loadAfterFirstFrame()
        let listed = Clock.monotonic()
        let drawn = frame.screen.lines.reduce(0) { $0 + $1.count }
        func ms(_ a: UInt64, _ b: UInt64) -> String { String(format: "%.2f", Double(b - a) / 1e6) }
        say("breakdown open=\(ms(start, opened)) client=\(ms(opened, created)) load=\(ms(created, loaded)) rendered=\(drawn) messages=\(frame.messages) "
            + "channels=\(frame.channels) then list=\(ms(loaded, listed)) channels=\(frame.client.state.channels.count)")
        say("rss \(atFrame.rss) \(atFrame.hwm)")
        let typing = measureEnterToScreen(frame.client, runs: 20)
        say("enter " + typing.enter.map { String(format: "%.3f", $0) }.joined(separator: " "))
        say("render " + typing.render.map { String(format: "%.3f", $0) }.joined(separator: " "))
        // The typed messages are dropped before the engine could send them, so the seeded
        // container keeps its message count and the next run can reuse it.
        try client.discardOutgoing()
        // The app remembers the channel on screen as it exits; the next run opens it first.
        frame.client.finish()
        // A running client also has its engine going; memory is read again once it settled.
        client.start()
        usleep(UInt32(settle * 1_000_000))
        let running = memoryMB()
        client.stop()
        say("running-rss \(running.rss) \(running.hwm)")
    }
}
