import Foundation

/// Commits that other clients on this machine need not fetch at once.
///
/// A commit to a local `sqlite` container rings a bell that wakes every
/// watching client within a millisecond, and each then reads the change feed.
/// For a record that only says "still here" (a presence heartbeat that changes
/// no state) that is a hundred fetches a minute per hundred clients, for
/// nothing anyone sees. A commit made inside ``quietly(_:)`` touches the
/// database file instead of the container directory, and before it writes:
/// watchers hear that the writers are still ringing and listen for bells alone,
/// so the commit's pages do not wake them; they read it at their next look (the
/// next ordinary commit, when their trust lapses, or the timer's look, at most
/// 30 s away).
///
/// A quiet bell is needed only to keep that trust from lapsing: while a bell of
/// either kind rang within the last half of ``watchersTrustBells``, every
/// watcher still listens for bells alone, so the commit's log pages wake none
/// of them and the quiet commit rings nothing. A round of a hundred heartbeats
/// within a few seconds so rings a few times, not a hundred.
///
/// On PostgreSQL, a quiet commit sends no NOTIFY (`PostgresSchema.notifyChange`):
/// listeners read it at their next poll, at most `PostgresChangeSignal.pollInterval`
/// away. On the `log` engine, and in network mode, it is an ordinary commit.
public enum QuietCommits {
    /// How long after a bell a watcher listens for bells alone, in seconds: a commit that rings
    /// nothing meanwhile is read when this lapses.
    ///
    /// Each quiet bell wakes every watcher, and each lapse makes every watcher look. With a hundred
    /// heartbeats a minute, 2 s should let the trust lapse a few times a minute in each client, and 5 s
    /// should ring about half as many bells and let it lapse almost never (estimated from the ring rule,
    /// not counted). A crowd of a hundred measured about 4 % less CPU with 5 s (BENCHMARKS.md, thirtieth round).
    public static let watchersTrustBells = 5.0

    /// Whether commits on the current thread or task are quiet.
    @TaskLocal public static var active = false

    /// Runs `body` with its commits quiet.
    public static func quietly<T>(_ body: () throws -> T) rethrows -> T {
        try $active.withValue(true, operation: body)
    }
}
