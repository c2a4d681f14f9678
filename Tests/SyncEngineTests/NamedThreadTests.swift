import Foundation
import Synchronization
import Testing
import RecordStore
@testable import SyncEngine

@Suite struct NamedThreadTests {
    /// The name the calling thread has, as the kernel keeps it.
    private static func currentName() -> String? {
        FileManager.default.contents(atPath: "/proc/thread-self/comm")
            .map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .newlines) }
    }

    /// The names of this process's threads, from `/proc/self/task/*/comm`.
    private static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task in
            FileManager.default.contents(atPath: "/proc/self/task/\(task)/comm")
                .map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .newlines) }
        }
    }

    /// The body runs under the name it was given, whatever thread started it; a name past Linux's
    /// 15 bytes is cut there, not refused (which would leave the starter's name).
    @Test(arguments: [("fatchat.test", "fatchat.test"), ("fatchat.much-too-long", "fatchat.much-to"), ("fatchat.abcdefé", "fatchat.abcdef")])
    func theBodyRunsUnderItsName(given: String, kept: String) {
        let seen = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        NamedThread.start(given) {
            seen.withLock { $0 = Self.currentName() }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(seen.withLock { $0 } == kept)
    }

    /// A running engine's three loops can be told apart in `top -H` and in a crash's backtrace.
    @Test func aRunningEnginesLoopsCarryTheirNames() throws {
        let dir = try TemporaryDirectory()
        let engine = try SyncEngine(container: try dir.container(user: "reader"), configuration: .testing())
        engine.start()
        defer { engine.stop() }
        let wanted: Set = ["fatchat.fetch", "fatchat.send", "fatchat.watch"]
        let deadline = Date().addingTimeInterval(10)
        var missing = wanted
        while !missing.isEmpty, Date() < deadline {
            missing = wanted.subtracting(Self.threadNames())
            if !missing.isEmpty { usleep(10_000) }
        }
        #expect(missing.isEmpty, "no thread is called \(missing.sorted()); threads: \(Self.threadNames())")
    }
}
