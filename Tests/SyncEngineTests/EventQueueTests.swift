import Foundation
import Testing
@testable import SyncEngine

@Suite struct EventQueueTests {
    /// A reader that pops only when `poll` says the descriptor is readable gets every event, and an
    /// empty queue leaves the descriptor quiet, however one producer's pushes and the pops interleave.
    @Test func everyEventWakesTheReaderAndAnEmptyQueueLeavesTheDescriptorQuiet() throws {
        let queue = try EventQueue<Int>()
        let count = 20_000
        let producer = Thread {
            for k in 0..<count {
                queue.push(k)
                if k % 64 == 0 { usleep(50) }
            }
        }
        producer.start()
        var received: [Int] = []
        var stalled = false
        var emptyInARow = 0, mostEmptyInARow = 0
        while received.count < count {
            var fds = pollfd(fd: queue.descriptor, events: Int16(POLLIN), revents: 0)
            // A lost wake-up leaves an event waiting behind a quiet descriptor.
            guard poll(&fds, 1, 2_000) == 1 else {
                stalled = true
                break
            }
            let before = received.count
            while let event = queue.pop() { received.append(event) }
            emptyInARow = received.count == before ? emptyInARow + 1 : 0
            mostEmptyInARow = max(mostEmptyInARow, emptyInARow)
        }
        #expect(!stalled, "\(count - received.count) events waited behind a quiet descriptor")
        #expect(received == Array(0..<received.count))
        // A push may write its byte after its event was taken: one wake-up finds nothing, and empties the pipe.
        #expect(mostEmptyInARow <= 1, "the reader woke \(mostEmptyInARow) times in a row to an empty queue")
        #expect(queue.pop() == nil)
        var fds = pollfd(fd: queue.descriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&fds, 1, 0) == 0, "the descriptor stays readable with nothing queued: the reader would spin")
    }
}
