import RecordStore

/// Which of a loop's looks on a timer can be spared: those at database files unchanged since the last
/// look that read them, as a `stat` shows (``DatabaseFilesStamp``).
///
/// An idle client looks on timers only for what nothing woke it for (a commit inotify missed, what
/// another process of the same user left in the outbox), and each look was a read woken cold, with its
/// locks and its `pread`s and `pwrite`s (BENCHMARKS.md, twenty-first round). At most
/// ``mostSpared`` looks in a row are spared, so a commit that a stamp could not see is found all the
/// same, within that many timer periods.
struct SparedLooks {
    static let mostSpared = 9
    private var lastRead: DatabaseFilesStamp?
    private var spared = 0

    /// Notes the stamp taken just before a look read the database.
    mutating func reading(_ stamp: DatabaseFilesStamp?) {
        lastRead = stamp
        spared = 0
    }

    /// Whether a look on the timer at files stamped `stamp` can be spared, with at most `most` spared
    /// in a row; it is counted if so.
    mutating func spares(_ stamp: DatabaseFilesStamp?, atMost most: Int = Self.mostSpared) -> Bool {
        guard let stamp, let lastRead, stamp == lastRead, lastRead.isSettled, spared < most else { return false }
        spared += 1
        return true
    }
}
