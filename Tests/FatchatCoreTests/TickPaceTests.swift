import Foundation
import Testing
@testable import FatchatCore

/// How the main loop times its ticks: every second while busy; while quiet, once when the handler says
/// something is due, never later than the longest quiet wait and never put off by the events between.
@Suite struct TickPaceTests {
    let now = ContinuousClock.now
    let wallNow = Date(timeIntervalSince1970: 1_800_000_000)

    func retimed(_ pace: TickPace, _ running: TickPace.Timer?) -> TickPace.Timer? {
        pace.retimed(running, now: now, wallNow: wallNow)
    }

    @Test func aBusyLoopTicksEverySecondAndKeepsItsTimer() {
        let pace = TickPace()
        #expect(retimed(pace, nil) == .every(.seconds(1)))
        #expect(retimed(pace, .every(.seconds(1))) == nil, "a running timer keeps its phase")
        #expect(retimed(pace, .once(at: now + .seconds(5))) == .every(.seconds(1)), "busy again: every second at once")
    }

    @Test func aQuietLoopTicksWhenDueWithinItsBounds() {
        let pace = TickPace()
        pace.quiet = true
        pace.due = wallNow + 12.5
        #expect(retimed(pace, nil) == .once(at: now + .milliseconds(12_500)))
        #expect(retimed(pace, .every(.seconds(1))) == .once(at: now + .milliseconds(12_500)))
        pace.due = wallNow + 600
        #expect(retimed(pace, nil) == .once(at: now + .seconds(30)), "never longer than the longest quiet wait")
        pace.due = nil
        #expect(retimed(pace, nil) == .once(at: now + .seconds(30)))
        pace.due = wallNow - 5
        #expect(retimed(pace, nil) == .once(at: now + .seconds(1)), "overdue: the next second, not a spin")
    }

    @Test func eventsBringAQuietTickForwardButNeverPutItOff() {
        let pace = TickPace()
        pace.quiet = true
        pace.due = wallNow + 20
        #expect(retimed(pace, .once(at: now + .seconds(8))) == nil, "a sooner tick serves")
        #expect(retimed(pace, .once(at: now + .seconds(25))) == .once(at: now + .seconds(20)), "a later one is brought forward")
        pace.due = nil
        #expect(retimed(pace, .once(at: now + .seconds(29))) == nil, "an event does not restart the longest wait")
    }

    /// A real loop: a quiet ticker ticks at its due, then at the longest quiet wait, even while events keep
    /// retiming it; busy, it ticks at its period.
    @Test func aTickerOnALoopTicksWhenDueAndIsNotHeldBackByEvents() throws {
        let loop = try EventLoop()
        let pace = TickPace(busy: .milliseconds(50), longestQuiet: .milliseconds(600))
        pace.quiet = true
        let start = ContinuousClock.now
        pace.due = Date() + 0.2
        var ticks: [Duration] = []
        let ticker = Ticker(loop: loop, pace: pace) {
            ticks.append(start.duration(to: .now))
            pace.due = nil
        }
        // An event every 20 ms retimes the ticker, as a client's keys and messages do.
        loop.schedule(after: .milliseconds(20), repeating: .milliseconds(20)) { ticker.retime() }
        loop.schedule(after: .milliseconds(1750)) { loop.stop() }
        try loop.run()
        #expect(ticks.count == 3, "at 0.2 s, 0.8 s and 1.4 s: \(ticks)")
        #expect(ticks.first.map { $0 >= .milliseconds(200) && $0 < .milliseconds(600) } == true, "the due tick: \(ticks)")

        pace.quiet = false
        ticks = []
        ticker.retime()
        loop.schedule(after: .milliseconds(500)) { loop.stop() }
        try loop.run()
        #expect(ticks.count >= 4, "busy, a tick every 50 ms: \(ticks.count) in 0.5 s")
    }
}
