import Foundation

/// A bar for long work, on stderr: redrawn in place when that is a terminal, and otherwise
/// a plain line now and then, so a log file or a pipe gets no carriage returns.
///
/// A terminal is redrawn at most ten times a second; plain output gets a line per tenth of the
/// work (or every ten seconds when the total is unknown). The last report is always shown.
public final class ProgressBar {
    private let fd: Int32
    private let terminal: Bool
    private var lastDrawn = ContinuousClock.now - .seconds(3600)
    private var lastTenth = -1
    /// The newest report, and whether it is on screen yet.
    private var latest: (fraction: Double?, text: String)?
    private var latestShown = true
    private var ended = false

    public init(fd: Int32 = STDERR_FILENO, terminal: Bool? = nil) {
        self.fd = fd
        self.terminal = terminal ?? (isatty(fd) == 1)
    }

    /// Reports that `fraction` (0…1, nil when unknown) of the work is done, described by `text`.
    public func update(_ fraction: Double?, _ text: String) {
        guard !ended else { return }
        latest = (fraction, text)
        latestShown = false
        let now = ContinuousClock.now
        if terminal {
            guard now - lastDrawn >= .milliseconds(100) else { return }
        } else if let fraction {
            let tenth = Int(min(1, max(0, fraction)) * 10)
            guard tenth > lastTenth else { return }
            lastTenth = tenth
        } else {
            guard now - lastDrawn >= .seconds(10) else { return }
        }
        lastDrawn = now
        show(last: false)
    }

    /// The last report: always shown, and the bar's line is ended.
    public func finish(_ text: String) {
        guard !ended else { return }
        latest = (1, text)
        latestShown = false
        end()
    }

    /// Ends the bar where it stands, showing its newest report if that was held back.
    /// Call it before writing anything else; a bar with nothing reported yet stays as it is.
    public func end() {
        guard !ended, latest != nil else { return }
        ended = true
        if !latestShown {
            show(last: true)
        } else if terminal {
            emit("\n")
        }
    }

    private func show(last: Bool) {
        guard let latest else { return }
        latestShown = true
        emit(Self.line(latest.fraction, latest.text, terminal: terminal, last: last))
    }

    private func emit(_ line: String) {
        let bytes = Array(line.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// One report as it is drawn: `[#####-----] text` in place on a terminal, the text alone on a line otherwise.
    static func line(_ fraction: Double?, _ text: String, terminal: Bool, last: Bool) -> String {
        guard terminal else { return text + "\n" }
        let width = 30
        let filled = fraction.map { min(width, max(0, Int($0 * Double(width)))) }
        let bar = filled.map { String(repeating: "#", count: $0) + String(repeating: "-", count: width - $0) }
            ?? String(repeating: "?", count: width)
        return "\r[\(bar)] \(text)\u{1B}[K" + (last ? "\n" : "")
    }
}
