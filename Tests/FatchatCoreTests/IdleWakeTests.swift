import Foundation
import ProcessTestKit
import Testing

/// An idle client's threads sleep until something happens: a hundred of them on one machine add up.
///
/// libdispatch on Linux wakes a process once a second, for as long as it lives, from the first job any
/// of its worker threads runs. So the client's background work (spreading signatures over the cores,
/// writing verdicts, opening its two files at once, presence and typing) runs on threads of its own.
@Suite(.startsProcesses, .serialized, .enabled(if: OSUsers.available, "needs root, to make OS users"))
struct IdleWakeTests {
    static let alice = "fatchat-test-iwa"
    static let bob = "fatchat-test-iwb"
    static let group = "fatchat-test-iw"

    @Test func aBotThatReceivedABurstThenSleeps() async throws {
        let (root, container) = try await GroupContainer.make(users: [Self.alice, Self.bob], group: Self.group)
        defer { try? FileManager.default.removeItem(at: root) }
        let (bot, input) = try SharedContainerFixture.runningBot(Self.alice, ["--container", container, "--json", "--join", "general"])
        defer { bot.killIfRunning() }
        #expect(await bot.waitForLines(1, timeout: .seconds(60)), "alice's bot joined: \(bot.errorText)")
        let (talker, talkerInput) = try SharedContainerFixture.runningBot(Self.bob, ["--container", container, "--json", "--join", "general"])
        defer { talker.killIfRunning() }
        #expect(await talker.waitForLines(1, timeout: .seconds(60)), "bob's bot joined: \(talker.errorText)")
        // Enough at once that bob's sender signs a batch on two cores, and alice's bot checks one.
        let count = 40
        for index in 0..<count {
            talkerInput.fileHandleForWriting.write(Data(#"{"cmd":"post","channel":"general","text":"idle \#(index)"}"#.utf8 + [10]))
        }
        func seen() -> Int {
            SharedContainerFixture.objects(bot).filter { $0["type"] as? String == "message" && ($0["text"] as? String)?.hasPrefix("idle ") == true }.count
        }
        #expect(await waitUntil(timeout: .seconds(60)) { seen() >= count }, "alice's bot saw bob's \(count) posts: \(bot.lines.suffix(3)) \(bot.errorText)")
        try talkerInput.fileHandleForWriting.close()
        _ = try await talker.finish(timeout: .seconds(60))

        // Once the verdicts, the position and bob's leaving are dealt with, some three seconds pass with at
        // most one wake-up (the bot's 5-second tick): Dispatch's watch on its pool would wake it three times.
        var quiet = false
        var windows: [[String: Int]] = []
        let deadline = Date() + 30
        while !quiet, Date() < deadline {
            let before = ThreadSwitches.byThread(of: bot.processIdentifier)
            try await Task.sleep(for: .seconds(3))
            let after = ThreadSwitches.byThread(of: bot.processIdentifier)
            // A thread that ended meanwhile is not counted; one that began counts every switch it made.
            let woke = after.reduce(into: [String: Int]()) { woke, thread in
                let count = thread.value - before[thread.key, default: 0]
                if count > 0 { woke[thread.key] = count }
            }
            windows.append(woke)
            quiet = woke.values.reduce(0, +) <= 1
        }
        #expect(quiet, "wake-ups in each 3 s, by thread: \(windows)")
        #expect(!ThreadSwitches.byThread(of: bot.processIdentifier).keys.contains { $0.contains("qos") },
                "no Dispatch worker was started: \(ThreadSwitches.byThread(of: bot.processIdentifier).keys.sorted())")
        try input.fileHandleForWriting.close()
        _ = try await bot.finish(timeout: .seconds(60))
    }
}
