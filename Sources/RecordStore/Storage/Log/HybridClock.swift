import Foundation
import Synchronization

/// A hybrid logical clock: milliseconds since 1970 in the high 48 bits, a counter in the low 16.
///
/// It orders one creator's entries across that creator's clients: a stamp is
/// always above every stamp this client has written or read, and close to
/// the wall clock otherwise. Ties between clients break on the client ID.
struct HybridTime: Hashable, Comparable, Sendable {
    var rawValue: UInt64

    init(rawValue: UInt64) { self.rawValue = rawValue }

    init(milliseconds: UInt64, counter: UInt16) {
        rawValue = (milliseconds << 16) | UInt64(counter)
    }

    var milliseconds: UInt64 { rawValue >> 16 }

    static func < (lhs: HybridTime, rhs: HybridTime) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The clock of one writing client.
final class HybridClock: Sendable {
    /// How far ahead of our wall clock a stamp we read may pull our clock: a log with stamps
    /// from far in the future (a wrong clock, or a hostile writer) must not drag every client along.
    static let maximumDrift: UInt64 = 5 * 60 * 1000

    private let last = Mutex<UInt64>(0)
    private let wallClock: @Sendable () -> UInt64

    init(wallClock: @escaping @Sendable () -> UInt64 = { UInt64(max(0, Date().timeIntervalSince1970 * 1000)) }) {
        self.wallClock = wallClock
    }

    /// A new stamp, above every stamp given or observed so far.
    func next() -> HybridTime {
        let wall = HybridTime(milliseconds: wallClock(), counter: 0).rawValue
        return last.withLock { last in
            last = max(wall, last &+ 1)
            return HybridTime(rawValue: last)
        }
    }

    /// Moves the clock past a stamp read from a log, unless it is implausibly far ahead.
    func observe(_ time: HybridTime) {
        let limit = wallClock() &+ Self.maximumDrift
        guard time.milliseconds <= limit else { return }
        last.withLock { $0 = max($0, time.rawValue) }
    }
}
