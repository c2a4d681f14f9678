import Foundation

/// How often a process's threads gave up the CPU to wait (`voluntary_ctxt_switches`): each is a sleep that
/// something ended, so a thread that is left alone and counts few was woken rarely.
public enum ThreadSwitches {
    /// Each thread's count, keyed by its name and ID (`fatchat.fetch 4242`).
    public static func byThread(of pid: pid_t) -> [String: Int] {
        let tasks = "/proc/\(pid)/task"
        var found: [String: Int] = [:]
        for task in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            guard let status = try? String(contentsOfFile: "\(tasks)/\(task)/status", encoding: .utf8) else { continue }
            found["\(field("Name", in: status) ?? "?") \(task)"] = field("voluntary_ctxt_switches", in: status).flatMap { Int($0) } ?? 0
        }
        return found
    }

    /// The count of the process's main thread, the one whose ID is the process's.
    public static func mainThread(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/status", encoding: .utf8) else { return nil }
        return field("voluntary_ctxt_switches", in: status).flatMap { Int($0) }
    }

    /// The value of a `Key:\tvalue` line of a status file.
    private static func field(_ key: String, in status: String) -> String? {
        status.split(separator: "\n").first { $0.hasPrefix(key + ":") }?.dropFirst(key.count + 1).trimmingCharacters(in: .whitespaces)
    }
}
