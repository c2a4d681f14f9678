import Testing
@testable import TerminalUI

/// Arriving messages redraw at most once a period; the first frame never waits.
@Suite struct FramePacingTests {
    @Test func aFrameRightAfterAnotherWaitsOutThePeriodAndNoLonger() {
        let start = ContinuousClock.now
        var pacing = FramePacing()
        #expect(pacing.wait(at: start) == nil, "nothing drawn yet: draw at once")
        pacing.drew(at: start)
        #expect(pacing.wait(at: start) == FramePacing.period)
        #expect(pacing.wait(at: start + .milliseconds(10)) == FramePacing.period - .milliseconds(10))
        #expect(pacing.wait(at: start + FramePacing.period) == nil)
        #expect(pacing.wait(at: start + .seconds(5)) == nil)
        pacing.drew(at: start + .seconds(5))
        #expect(pacing.wait(at: start + .seconds(5) + .milliseconds(1)) == FramePacing.period - .milliseconds(1))
    }
}
