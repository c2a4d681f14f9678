import Foundation
import RecordStore

/// Shows a long catch-up from a log container's logs: a bar redrawn in place on a terminal,
/// a plain line a step otherwise, so that a log file or a pipe gets no carriage returns.
public enum CatchUpBar {
    /// Reads every log to its end before the app starts; a short read shows nothing.
    public static func catchUp(_ container: Container, to fd: Int32 = STDERR_FILENO) throws {
        let terminal = isatty(fd) == 1
        try container.refreshPublicDatabase { progress in
            let text = Array(line(progress, terminal: terminal).utf8)
            _ = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }
    }

    /// One report as it is drawn.
    static func line(_ progress: CatchUpProgress, terminal: Bool) -> String {
        guard terminal else { return progress.description + "\n" }
        let width = 30
        let fraction = progress.isDone || progress.bytesTotal <= 0 ? 1 : Double(progress.bytesRead) / Double(progress.bytesTotal)
        let filled = min(width, max(0, Int(fraction * Double(width))))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        return "\r[\(bar)] \(progress.description)\u{1B}[K" + (progress.isDone ? "\n" : "")
    }
}
