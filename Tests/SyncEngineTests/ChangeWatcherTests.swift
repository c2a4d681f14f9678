import Foundation
import RecordStore
import Synchronization
import Testing
@testable import SyncEngine

@Suite struct ChangeWatcherTests {
    /// A message's commit writes its pages to the WAL one at a time, each an inotify event; the
    /// watcher waits for them to stop, or for the commit's bell, so that the loop looks once per
    /// commit, not once per page.
    @Test func eachCommitWakesTheWatcherAboutOnce() throws {
        let dir = try TemporaryDirectory()
        let writer = try dir.container(user: "writer")
        let watcher = try ChangeWatcher(directory: writer.url, useInotify: true)
        try #require(watcher.seesFilesystemEvents)
        let commits = 20
        let done = Atomic<Bool>(false)
        let thread = Thread {
            for k in 0..<commits {
                usleep(30_000)
                var message = Record(recordType: "Message", recordID: RecordID(recordName: "m\(k)"))
                message["text"] = .string("message \(k), long enough to fill a few pages of the full-text index")
                _ = try? writer.publicDatabase.save(message)
            }
            done.store(true, ordering: .sequentiallyConsistent)
        }
        thread.start()
        var wakes = 0, bells = 0
        waiting: while true {
            switch watcher.wait(timeout: 0.2) {
            case .filesystem: wakes += 1
            case .committed: wakes += 1; bells += 1
            case .timeout where done.load(ordering: .sequentiallyConsistent): break waiting
            case .timeout, .woken: continue
            }
        }
        let ids = (0..<commits).map { RecordID(recordName: "m\($0)") }
        let saved = try writer.publicDatabase.records(for: ids).values.filter { (try? $0.get()) != nil }.count
        #expect(saved == commits)
        // Waking for each page was four to six wake-ups a commit; a writer put off the CPU in mid-commit may cost one more.
        #expect(wakes >= 1 && wakes <= commits * 2, "\(wakes) wake-ups for \(commits) commits")
        // Each commit rings once it is visible; two that ring while the watcher is busy wake it once.
        #expect(bells >= commits / 2, "\(bells) bells for \(commits) commits")
    }

    /// Once a bell has rung, a change that rings none (another program writing in the directory)
    /// wakes nothing at once; when the trust in bells lapses, `wait` returns for the caller's look,
    /// and from then on every change wakes it again.
    @Test func aChangeWithoutABellWaitsOnlyUntilTheTrustInBellsLapses() throws {
        let dir = try TemporaryDirectory()
        let writer = try dir.container(user: "writer")
        let watcher = try ChangeWatcher(directory: writer.url, useInotify: true)
        try #require(watcher.seesFilesystemEvents)
        _ = try writer.publicDatabase.save(Record(recordType: "Message", recordID: RecordID(recordName: "rings")))
        let rang = Date().addingTimeInterval(5)
        var heard = false
        while !heard, Date() < rang { heard = watcher.wait(timeout: 0.5) == .committed }
        try #require(heard, "the save rang no bell")

        let noise = writer.url.appendingPathComponent("noise").path
        func touch() {
            let fd = open(noise, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            var byte: UInt8 = 0
            _ = write(fd, &byte, 1)
            close(fd)
        }
        let start = Date()
        touch()
        let atOnce = watcher.wait(timeout: 0.3)
        let lapse = watcher.wait(timeout: 10)
        let returnedAfter = Date().timeIntervalSince(start)
        #expect(atOnce == .timeout, "a change without a bell woke the watcher while bells were trusted")
        #expect(lapse == .timeout)
        #expect(returnedAfter < ChangeWatcher.trustInBells + 1, "returned after \(returnedAfter) s, not when the trust lapsed")
        touch()
        #expect(watcher.wait(timeout: 5) == .filesystem, "after the lapse, a change without a bell went unheard")
    }

    /// A quiet commit (a presence heartbeat) touches the database file, not the directory, and before
    /// it writes: the watcher trusts bells from then on, so the commits' log pages do not wake it, and
    /// it does not return for them. Rung loudly, the same commits each wake it.
    @Test func quietCommitsKeepTheTrustInBellsAndWakeNobody() throws {
        let dir = try TemporaryDirectory()
        let writer = try dir.container(user: "writer")
        let watcher = try ChangeWatcher(directory: writer.url, quietBell: writer.quietBellName, useInotify: true)
        try #require(watcher.seesFilesystemEvents)
        #expect(writer.quietBellName == "public.sqlite")

        /// Saves `count` records half a second apart, quietly or not, and counts the wake-ups meanwhile.
        func wakes(quietly: Bool, count: Int) -> Int {
            let done = Atomic<Bool>(false)
            let thread = Thread {
                for k in 0..<count {
                    usleep(500_000)
                    let save = { _ = try? writer.publicDatabase.save(Record(recordType: "Presence", recordID: RecordID(recordName: "\(quietly ? "quiet" : "loud")\(k)"))) }
                    if quietly { QuietCommits.quietly(save) } else { save() }
                }
                done.store(true, ordering: .sequentiallyConsistent)
            }
            thread.start()
            var wakes = 0
            while !done.load(ordering: .sequentiallyConsistent) {
                switch watcher.wait(timeout: 0.1) {
                case .filesystem, .committed: wakes += 1
                case .timeout, .woken: continue
                }
            }
            return wakes
        }

        // No bell has rung, so the watcher listens to every change; a quiet commit rings before it writes,
        // so its pages wake the watcher no more than the commits that follow within its trust. (It rings once
        // the container's making is older than half the trust.)
        usleep(UInt32((QuietCommits.watchersTrustBells / 2 + 0.2) * 1e6))
        let first = Thread { QuietCommits.quietly { _ = try? writer.publicDatabase.save(Record(recordType: "Presence", recordID: RecordID(recordName: "first"))) } }
        first.start()
        let atFirst = watcher.wait(timeout: 1)
        #expect(atFirst == .timeout, "a quiet commit woke a watcher that listened to everything: \(atFirst)")

        _ = try writer.publicDatabase.save(Record(recordType: "Message", recordID: RecordID(recordName: "rings")))
        let rang = Date().addingTimeInterval(5)
        var heard = false
        while !heard, Date() < rang { heard = watcher.wait(timeout: 0.5) == .committed }
        try #require(heard, "the save rang no bell")
        // Quiet commits half a second apart for twice the trust: had the trust lapsed, their pages would
        // have woken the watcher. A machine that holds the writer up for seconds may let it lapse once.
        let quietCount = Int(QuietCommits.watchersTrustBells * 4)
        let quiet = wakes(quietly: true, count: quietCount)
        #expect(quiet <= 1, "\(quiet) wake-ups for \(quietCount) quiet commits")
        let loud = wakes(quietly: false, count: 8)
        #expect(loud >= 6, "\(loud) wake-ups for 8 commits that rang")
    }

    /// A quiet commit rings only when no bell rang within half the watchers' trust: a burst of them, as a
    /// round of heartbeats is, rings about that often, enough to keep every watcher's trust, not once each.
    @Test func aBurstOfQuietCommitsRingsOncePerHalfTheTrust() throws {
        let dir = try TemporaryDirectory()
        let writer = try dir.container(user: "writer")
        let bells = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        try #require(bells >= 0)
        defer { close(bells) }
        try #require(inotify_add_watch(bells, writer.url.path, UInt32(IN_ATTRIB)) >= 0)
        var quietBells = 0
        var buffer = [UInt8](repeating: 0, count: 65536)
        /// Reads the events queued so far (the kernel folds an event into an identical one still unread, so each commit's are read before the next).
        func countBells() {
            while true {
                let count = read(bells, &buffer, buffer.count)
                guard count > 0 else { return }
                var offset = 0
                while offset + 16 <= count {
                    let length = buffer[(offset + 12)..<(offset + 16)].withUnsafeBytes { Int($0.loadUnaligned(as: UInt32.self)) }
                    let name = String(decoding: buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }, as: UTF8.self)
                    if name == writer.quietBellName { quietBells += 1 }
                    offset += 16 + length
                }
            }
        }
        let start = Date()
        for k in 0..<50 {
            QuietCommits.quietly { _ = try? writer.publicDatabase.save(Record(recordType: "Presence", recordID: RecordID(recordName: "beat\(k)"))) }
            countBells()
            usleep(100_000)
        }
        let elapsed = Date().timeIntervalSince(start)
        let saved = try writer.publicDatabase.records(for: (0..<50).map { RecordID(recordName: "beat\($0)") }).values.filter { (try? $0.get()) != nil }.count
        #expect(saved == 50)
        // A ring per half the trust at most (about 2 on an idle machine, more where the saves are slow), and at least
        // one once the container's making is that old; ringing at every commit rings 50.
        let most = Int(elapsed / (QuietCommits.watchersTrustBells / 2)) + 2
        #expect(quietBells >= 1 && quietBells <= most, "\(quietBells) quiet bells for 50 quiet commits in \(elapsed) s")
        #expect(most < 50, "the saves took \(elapsed) s, too slow for the test to tell")
    }
}

