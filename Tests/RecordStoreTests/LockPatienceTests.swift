import Foundation
import ProcessTestKit
@testable import RecordStore
import Testing

/// A read on a thread that must not wait gives up on a locked file at once; other threads keep the long wait.
@Suite(.startsProcesses, .serialized, .enabled(if: HeldLock.available, "needs the sqlite3 command"))
struct LockPatienceTests {
    @Test func aBriefReadOnALockedNetworkContainerIsBusyAtOnceAndWorksOnceTheLockIsGone() async throws {
        let directory = try TemporaryDirectory()
        let container = try directory.container(mode: .network)
        var note = Record(recordType: "Note")
        note["text"] = .string("kept")
        let saved = try container.publicDatabase.save(note)
        let file = directory.path("container").appendingPathComponent("public.sqlite").path
        let lock = try await HeldLock(path: file, vfs: "unix-dotfile")

        let started = ContinuousClock.now
        let busy = Result { try LockPatience.brief { try container.publicDatabase.record(for: saved.recordID) } }
        // A hang guard only: without the brief deadline the read waits out the store's 120 s.
        #expect(ContinuousClock.now - started < .seconds(60))
        let error = try #require(busy.failure as? StoreError)
        #expect(error.code == .zoneBusy)
        #expect(error.message.contains("locked by another process"))

        lock.release()
        #expect(try LockPatience.brief { try container.publicDatabase.record(for: saved.recordID) }["text"] == .string("kept"))
    }

    @Test func twoReadsAtOnceOnALockedContainerAreBothBriefWhicheverThreadRunsThem() async throws {
        let directory = try TemporaryDirectory()
        let container = try directory.container(mode: .network)
        let saved = try container.publicDatabase.save(Record(recordType: "Note"))
        let lock = try await HeldLock(path: directory.path("container").appendingPathComponent("public.sqlite").path, vfs: "unix-dotfile")

        let started = ContinuousClock.now
        let busy = Result {
            try LockPatience.brief {
                try OnAllCores.both({ try container.publicDatabase.record(for: saved.recordID) },
                                    { try container.publicDatabase.records(matching: Query(recordType: "Note")).records })
            }
        }
        // Without the caller's patience, the read on the other core waits as long as the lock is held (tens of seconds).
        #expect(ContinuousClock.now - started < .seconds(15))
        #expect((busy.failure as? StoreError)?.code == .zoneBusy)
        lock.release()
    }

    @Test func workRunAtOnceKeepsTheCallersPatienceOnBothThreads() throws {
        // The two pieces wait for each other (a second at most), so they run on two threads whenever a second
        // one is free; on a busy machine that may take a few tries.
        func pieces() -> (@Sendable () -> (TimeInterval?, UInt64), @Sendable () -> (TimeInterval?, UInt64)) {
            let (first, second) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            return ({ first.signal(); _ = second.wait(timeout: .now() + 1); return (LockPatience.deadline, UInt64(pthread_self())) },
                    { second.signal(); _ = first.wait(timeout: .now() + 1); return (LockPatience.deadline, UInt64(pthread_self())) })
        }
        var onTwoThreads = false
        for _ in 0..<20 where !onTwoThreads {
            let (a, b) = try LockPatience.brief { let (one, two) = pieces(); return try OnAllCores.both(one, two) }
            #expect(a.0 == LockPatience.briefDeadline && b.0 == LockPatience.briefDeadline)
            onTwoThreads = a.1 != b.1
            let (one, two) = pieces()
            let (c, d) = try OnAllCores.both(one, two)
            #expect(c.0 == nil && d.0 == nil)
        }
        #expect(onTwoThreads || ProcessInfo.processInfo.activeProcessorCount == 1, "the pieces never ran on a second thread")
    }

    @Test func theStoreKeepsItsOwnDeadlineOutsideABriefScope() throws {
        #expect(LockPatience.deadline == nil)
        LockPatience.brief { #expect(LockPatience.deadline == LockPatience.briefDeadline) }
        #expect(LockPatience.deadline == nil)
    }
}
