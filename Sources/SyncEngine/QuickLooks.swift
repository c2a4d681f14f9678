import Foundation
import RecordStore

/// Looks at the bell between polls, for a client where others' bells are not heard.
///
/// A `log` writer rings by touching `logs/`'s times, and inotify hears that only for writes made
/// through the same mount on this machine. A writer on another machine or mount was read at the
/// next poll, so its messages came half a poll late on average (BENCHMARKS.md, thirty-second
/// round). While such writers write (for `lasting` after a look on the timer last found a change
/// that rang the bell, which a heard bell would have brought sooner), the fetch loop instead looks
/// at `logs/`'s stamp every `interval` seconds, one `fstat`, and polls the logs only when it moved.
/// It still polls at least every `pollInterval`, since not every filesystem shows a folder's new
/// times at once (sshfs keeps them 20 s), and a quiet commit rings nothing. After `lasting` with no
/// such change it polls alone again, so an idle client pays nothing for it, and nor does one that
/// hears every bell.
struct QuickLooks {
    /// How long quick looks go on after a look on the timer last found a change that rang the bell.
    static let lasting: Duration = .seconds(30)

    /// Seconds between quick looks; `nil` when the client makes none.
    let interval: Double?
    /// How many quick looks in a row may find the bell as it was before the loop polls all the same.
    let mostSpared: Int
    private var lastChange: ContinuousClock.Instant?
    /// The bell's stamp at the last look.
    private var lastBell: DatabaseFilesStamp?

    /// Quick looks every `interval` seconds between polls `pollInterval` apart; none for `nil`, or an
    /// interval that is not shorter than the poll's.
    init(interval: Double?, pollInterval: Double) {
        let quick = interval.flatMap { $0 > 0 && $0 < pollInterval ? $0 : nil }
        self.interval = quick
        mostSpared = quick.map { max(0, Int((pollInterval / $0).rounded(.down)) - 1) } ?? 0
    }

    /// The stamp a look takes where quick looks are made, and how many looks in a row may be spared at it.
    ///
    /// Every look takes the bell's stamp (one `fstat`), so that the quick look after a bell heard here,
    /// which was read at once, is spared; only quick looks are spared at it, never the poll.
    func stamp(of database: RecordDatabase, quickLook: Bool) -> (DatabaseFilesStamp?, Int) {
        (database.bellStamp(), quickLook ? mostSpared : 0)
    }

    /// Notes what a look found, whether the timer woke the loop for it, and the bell's stamp then.
    ///
    /// Only a change that the timer's look found (a quick look or a poll) while the bell had moved since
    /// the last look comes from a writer whose bell this client did not hear, so only it sets quick looks
    /// going: a client whose writers all ring where it hears them makes none, and nor do quiet commits
    /// (everyone's presence heartbeats), which ring nothing and are found by the poll.
    mutating func note(changed: Bool, byTimer: Bool, bell: DatabaseFilesStamp?) {
        defer { lastBell = bell }
        guard interval != nil, changed, byTimer, let bell, bell != lastBell else { return }
        lastChange = .now
    }

    /// The seconds until the next quick look, while they go on; `nil` otherwise.
    var delay: Double? {
        guard let interval, let lastChange, ContinuousClock.now - lastChange < Self.lasting else { return nil }
        return interval
    }
}
