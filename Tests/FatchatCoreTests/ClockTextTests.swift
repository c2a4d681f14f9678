import Testing
@testable import FatchatCore

/// Times of day on message lines and plain bot lines read as `%02d` would print them.
@Suite struct ClockTextTests {
    @Test func eachPartHasAtLeastTwoDigits() {
        #expect(ClockText.of(9, 5) == "09:05")
        #expect(ClockText.of(0, 0, 0) == "00:00:00")
        #expect(ClockText.of(10, 59, 7) == "10:59:07")
        #expect(ClockText.of(23, 10) == "23:10")
        #expect(ClockText.of(123, -4) == "123:-4")
    }
}
