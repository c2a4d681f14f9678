import Foundation
import RecordStore
import Synchronization

/// Writes the records that only say what is happening now (presence, typing) straight to the
/// public database on a thread of its own, newest version only.
///
/// They skip the outbox on purpose: a typing notice that waited behind a lock would be wrong by
/// the time it arrived, and queuing it would show as pending on the status line. A record
/// submitted again before the last version went out replaces it, so a lock on the shared file
/// holds up one write per record, never a pile. A failure is dropped: the next heartbeat says it again.
///
/// A record submitted `quietly` (a heartbeat that changes nothing anyone sees) is written as a
/// quiet commit, which other clients read at their next look rather than at once.
final class EphemeralWriter: Sendable {
    private let database: RecordDatabase
    private let thread = JobThread(name: "fatchat.ephemeral")
    private struct State {
        var waiting: [RecordID: (record: Record, quiet: Bool)] = [:]
        var order: [RecordID] = []
        var scheduled = false
        var writes = 0
    }
    private let state = Mutex(State())

    init(database: RecordDatabase) { self.database = database }

    /// Writes `record` soon, over any version of it that is still waiting; `quietly` as a quiet commit,
    /// unless a version still waiting was not quiet.
    func submit(_ record: Record, quietly: Bool = false) {
        let schedule = state.withLock { state -> Bool in
            if let waiting = state.waiting[record.recordID] {
                state.waiting[record.recordID] = (record, quietly && waiting.quiet)
            } else {
                state.waiting[record.recordID] = (record, quietly)
                state.order.append(record.recordID)
            }
            defer { state.scheduled = true }
            return !state.scheduled
        }
        if schedule { thread.run { [self] in drain() } }
    }

    /// How many saves went out so far, for tests and the benchmark.
    var writes: Int { state.withLock { $0.writes } }

    /// Waits at most `timeout` seconds for what was submitted to be written; returns whether it was.
    @discardableResult
    func flush(timeout: Double) -> Bool {
        let done = DispatchSemaphore(value: 0)
        thread.run { done.signal() }
        return done.wait(timeout: .now() + timeout) == .success
    }

    private func drain() {
        while true {
            let batch = state.withLock { state -> [(record: Record, quiet: Bool)] in
                let batch = state.order.compactMap { state.waiting[$0] }
                state.waiting = [:]
                state.order = []
                if batch.isEmpty { state.scheduled = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            let records = batch.map(\.record)
            let save = { _ = try? self.database.modifyRecords(saving: records, deleting: [], savePolicy: .allKeys) }
            if batch.allSatisfy(\.quiet) { QuietCommits.quietly(save) } else { save() }
            state.withLock { $0.writes += batch.count }
        }
    }
}
