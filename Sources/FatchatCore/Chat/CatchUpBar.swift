import Foundation
import RecordStore

/// Shows a long catch-up from a log container's logs with a ``ProgressBar``.
public enum CatchUpBar {
    /// Reads every log to its end before the app starts; a short read shows nothing.
    public static func catchUp(_ container: Container, to fd: Int32 = STDERR_FILENO) throws {
        let bar = ProgressBar(fd: fd)
        try container.refreshPublicDatabase { progress in
            if progress.isDone {
                bar.finish(progress.description)
            } else {
                bar.update(progress.bytesTotal > 0 ? Double(progress.bytesRead) / Double(progress.bytesTotal) : nil, progress.description)
            }
        }
    }
}
