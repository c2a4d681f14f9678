import CStatfs

/// How a long-lived client keeps its resident memory small: glibc's allocator, told what a chat client needs.
///
/// A client's threads (fetch, send, presence, verdicts, the cores' helpers) seldom allocate at the
/// same time, yet glibc gives each thread that allocates an arena of its own, and each arena keeps
/// its freed pages. With 1,000,000 messages in 1,000 channels that was 1.2–1.5 MB of a running client's
/// 42.7 MB (BENCHMARKS.md, twenty-fourth round).
public enum ProcessMemory {
    /// Makes every thread allocate from one arena. Call it first thing in `main`, before any thread starts.
    public static func useOneArena() {
        _ = fatchat_use_one_malloc_arena()
    }

    /// Gives freed heap pages back to the system: for after a burst of temporary allocations,
    /// such as start-up's first reads, when the process goes on to sit idle.
    public static func giveBackFreed() {
        _ = fatchat_give_back_free_memory()
    }
}
