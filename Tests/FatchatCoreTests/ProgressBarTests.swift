import Foundation
import Testing
@testable import FatchatCore

/// The progress bar on stderr: in place on a terminal, a few plain lines otherwise.
@Suite struct ProgressBarTests {
    /// Runs `body` with a bar writing into a pipe, and returns all it wrote.
    static func output(terminal: Bool, _ body: (ProgressBar) -> Void) throws -> String {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let bar = ProgressBar(fd: fds[1], terminal: terminal)
        body(bar)
        close(fds[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = read(fds[0], &buffer, buffer.count)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        close(fds[0])
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func plainOutputIsALinePerTenthAndTheLastAlways() throws {
        let text = try Self.output(terminal: false) { bar in
            for done in 1...999 { bar.update(Double(done) / 1000, "copied \(done) of 1000") }
            bar.finish("copied 1000 of 1000")
        }
        let lines = text.split(separator: "\n").map(String.init)
        #expect(!text.contains("\r") && !text.contains("\u{1B}"))
        #expect(lines.count == 11, "\(lines)")
        #expect(lines.first == "copied 1 of 1000")
        #expect(lines.last == "copied 1000 of 1000")
    }

    @Test func aTerminalIsRedrawnInPlaceAtMostTenTimesASecondAndEndsWithTheNewest() throws {
        let began = ContinuousClock.now
        let text = try Self.output(terminal: true) { bar in
            for done in 1...500 { bar.update(Double(done) / 1000, "copied \(done) of 1000") }
            bar.end()
        }
        let elapsed = ContinuousClock.now - began
        let draws = text.components(separatedBy: "\r").dropFirst()
        // However fast the updates come, one draw per 100 ms, plus the held-back newest at the end.
        #expect(draws.count <= Int(elapsed / .milliseconds(100)) + 2, "\(draws.count) draws in \(elapsed)")
        #expect(draws.first?.hasPrefix("[--------------------------") == true, "\(text.debugDescription)")
        #expect(draws.last == "[###############---------------] copied 500 of 1000\u{1B}[K\n")
        #expect(text.filter { $0 == "\n" }.count == 1)
    }

    @Test func aBarThatReportedNothingWritesNothingAndStaysUsable() throws {
        let text = try Self.output(terminal: true) { bar in
            bar.end()
            bar.update(nil, "working")
            bar.finish("done")
        }
        #expect(text == "\r[??????????????????????????????] working\u{1B}[K\r[##############################] done\u{1B}[K\n")
    }
}
