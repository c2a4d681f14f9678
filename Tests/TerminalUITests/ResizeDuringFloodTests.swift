import Foundation
import ProcessTestKit
import Synchronization
import Testing

/// Issue 16: a resize that lands while the client is busy drawing arriving messages must
/// still be seen, without a key press. Another process (a bot) floods the channel while
/// the tmux window changes size again and again.
@Suite(.startsProcesses, .serialized, .enabled(if: TmuxSession.available, "needs tmux"))
struct ResizeDuringFloodTests {
    /// Sizes that change both width and height at every step, all wide enough for the channel list.
    static let sizes = [(80, 24), (120, 36), (70, 20), (110, 32), (90, 26), (130, 40), (64, 18), (100, 30)]

    @Test func everyResizeDuringAFloodRedrawsAtTheNewSizeWithoutAKey() async throws {
        let (root, container) = try await GroupContainer.makePrivate()
        defer { try? FileManager.default.removeItem(at: root) }
        // Both processes keep their private files in the sandbox, not in the tester's home.
        let data = root.appendingPathComponent("data").path
        let binary = try WorkerProcess.executable("fatchat").path
        let client = try TmuxSession(name: "fatchat-flood-\(UUID().uuidString.prefix(6))", width: 100, height: 30,
                                     command: ["env", "TERM=xterm-256color", "XDG_DATA_HOME=\(data)", binary,
                                               "--container", container, "--handle", "ada"])
        defer { client.kill() }
        #expect(try await client.waitFor("[ada]"), "\(client.screen)")

        let flood = try Flood(container: container, data: data)
        defer { flood.end() }
        #expect(try await client.waitFor("flood 1"), "the flood reaches the client: \(client.screen)")
        let firstSeen = Self.newestFlood(try client.capture())

        // Three rounds of sizes at least, then on until a hundred more messages were drawn: a bot the machine
        // starves posts fewer while the rounds last. A client that stopped drawing them still fails, at the cap.
        let cap = ContinuousClock.now + .seconds(60)
        var stale: [String] = []
        var resizes = 0
        var newest = firstSeen
        // A broken client would take the whole timeout every time; a few say enough.
        while stale.count < 3 {
            let (width, height) = Self.sizes[resizes % Self.sizes.count]
            try client.resize(width: width, height: height)
            resizes += 1
            if try await !frameMatches(client, width: width, height: height) {
                stale.append("resize \(resizes) \(width)x\(height):\n\(client.screen)")
            }
            newest = Self.newestFlood(try client.capture())
            if resizes >= 3 * Self.sizes.count, newest > firstSeen + 100 || ContinuousClock.now >= cap { break }
        }
        // The messages kept coming while the window changed size.
        #expect(newest > firstSeen + 100, "\(resizes) resizes, flood \(firstSeen) to \(newest):\n\(client.screen)")
        #expect(flood.errorText.isEmpty, "\(flood.errorText)")
        #expect(stale.isEmpty, "\(stale.count) of \(resizes) resizes left a stale frame:\n\(stale.joined(separator: "\n"))")
    }

    /// Waits until the pane shows a frame drawn for `width`×`height`. A stale frame stays until
    /// a key, so the wait only has to outlast a machine busy with other tests: 5 s was too short.
    private func frameMatches(_ client: TmuxSession, width: Int, height: Int) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            if Self.isFrame(try client.capture(), width: width, height: height) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Whether `screen` is a whole frame of that size: the title's member count ends one cell
    /// from the right edge, the status line is the second row from the bottom, and the channel
    /// list's separator runs down every row between them.
    static func isFrame(_ screen: String, width: Int, height: Int) -> Bool {
        let rows = screen.split(separator: "\n", omittingEmptySubsequences: false).map { Array($0) }
        guard rows.count >= height, height >= 4 else { return false }
        let title = String(rows[0]).replacing(/\s+$/, with: "")
        guard title.hasSuffix("member") || title.hasSuffix("members"), title.count == width - 1 else { return false }
        guard String(rows[height - 2]).hasPrefix(" [ada]") else { return false }
        return (1...(height - 3)).allSatisfy { rows[$0].count > 16 && rows[$0][16] == "│" }
    }

    /// The highest flood number on the screen.
    static func newestFlood(_ screen: String) -> Int {
        screen.matches(of: #/flood (\d+) /#).compactMap { Int($0.1) }.max() ?? 0
    }

    /// A bot of another handle posting to #general about a hundred times a second until ended.
    final class Flood: Sendable {
        private let bot: WorkerProcess
        private let input: FileHandle
        private let stopping = Atomic<Bool>(false)
        private let done = DispatchSemaphore(value: 0)

        init(container: String, data: String) throws {
            let pipe = Pipe()
            bot = try WorkerProcess("flood", executable: "fatchat",
                                    ["bot", "--container", container, "--handle", "bob", "--join", "general"],
                                    environment: ["XDG_DATA_HOME": data], input: pipe.fileHandleForReading)
            input = pipe.fileHandleForWriting
            // A bot that died must fail the test, not kill the test process with SIGPIPE.
            signal(SIGPIPE, SIG_IGN)
            let descriptor = input.fileDescriptor
            let thread = Thread { [self] in
                var count = 0
                while !stopping.load(ordering: .relaxed) {
                    count += 1
                    var line = Array("flood \(count) while the window changes size\n".utf8)
                    guard write(descriptor, &line, line.count) == line.count else { break }
                    Thread.sleep(forTimeInterval: 0.01)
                }
                done.signal()
            }
            thread.start()
        }

        /// What the bot wrote to standard error: nothing, while all goes well.
        var errorText: String { bot.errorText }

        /// Stops writing, ends the bot's input, and kills it if it lingers.
        func end() {
            stopping.store(true, ordering: .relaxed)
            done.wait()
            try? input.close()
            bot.killIfRunning()
        }
    }
}
