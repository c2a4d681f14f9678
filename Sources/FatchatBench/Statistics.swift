import Foundation

/// Clocks and order statistics for the benchmarks.
enum Clock {
    /// Monotonic nanoseconds, for durations inside one process.
    static func monotonic() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Wall-clock nanoseconds (CLOCK_REALTIME), comparable between processes.
    static func realtime() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Milliseconds taken by `body`, with its result.
    static func measure<T>(_ body: () throws -> T) rethrows -> (ms: Double, value: T) {
        let start = monotonic()
        let value = try body()
        return (Double(monotonic() - start) / 1e6, value)
    }
}

/// Percentiles of a sample, nearest-rank.
struct Distribution: Codable, Sendable {
    var count: Int
    var p50: Double
    var p95: Double
    var p99: Double
    var max: Double

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        count = sorted.count
        func rank(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return .nan }
            let index = Int((p * Double(sorted.count)).rounded(.up)) - 1
            return sorted[Swift.max(0, Swift.min(sorted.count - 1, index))]
        }
        p50 = rank(0.50)
        p95 = rank(0.95)
        p99 = rank(0.99)
        max = sorted.last ?? .nan
    }
}

/// The median of a sample; NaN when empty.
func median(_ samples: [Double]) -> Double {
    Distribution(samples).p50
}
