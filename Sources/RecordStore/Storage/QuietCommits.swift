import Foundation

/// Commits that other clients on this machine need not fetch at once.
///
/// A commit to a local `sqlite` container rings a bell that wakes every
/// watching client within a millisecond, and each then reads the change feed.
/// For a record that only says "still here" (a presence heartbeat that changes
/// no state) that is a hundred fetches a minute per hundred clients, for
/// nothing anyone sees. A commit made inside ``quietly(_:)`` touches the
/// database file instead of the container directory: watchers hear that the
/// writers are still ringing, but do not fetch; they read the commit at their
/// next look (the next ordinary commit, or the timer's look, at most 30 s away).
///
/// Only the local `sqlite` engine has bells; elsewhere a quiet commit is an
/// ordinary one.
public enum QuietCommits {
    /// Whether commits on the current thread or task are quiet.
    @TaskLocal public static var active = false

    /// Runs `body` with its commits quiet.
    public static func quietly<T>(_ body: () throws -> T) rethrows -> T {
        try $active.withValue(true, operation: body)
    }
}
