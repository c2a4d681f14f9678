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

    @Test func theStoreKeepsItsOwnDeadlineOutsideABriefScope() throws {
        #expect(LockPatience.deadline == nil)
        LockPatience.brief { #expect(LockPatience.deadline == LockPatience.briefDeadline) }
        #expect(LockPatience.deadline == nil)
    }
}
