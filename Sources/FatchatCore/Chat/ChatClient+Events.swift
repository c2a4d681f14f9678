import Foundation
import RecordStore
import SyncEngine

extension ChatClient {
    /// Starts watching the shared file for others' changes and sending the outbox, each on a thread of its own.
    ///
    /// `reportingDamagedRows` hands each damaged row this process skips (those
    /// skipped so far first) to the events as ``ChatEvent/damagedRowSkipped(_:)``
    /// instead of standard error: for a front end that draws on the terminal.
    public func start(reportingDamagedRows: Bool = false) {
        if reportingDamagedRows { engine.reportDamagedRows() }
        engine.start()
    }

    /// Stops watching and sending, waiting at most `timeout` seconds for that; returns whether it stopped.
    ///
    /// A write that another process's lock holds up is left to the process's
    /// exit: the outbox keeps it for the next run. A stopped client's events
    /// are over for good; the next run opens a new client.
    @discardableResult
    public func stop(waitingAtMost timeout: Double = .infinity) -> Bool { engine.stop(waitingAtMost: timeout) }

    /// A descriptor that is readable while events wait: pass it to `poll()`, then call ``drainEvents()``.
    public var eventDescriptor: Int32 { engine.eventDescriptor }

    /// Every event waiting now, oldest first; empty at once when none waits.
    public func drainEvents() -> [ChatEvent] {
        var events: [ChatEvent] = []
        while let event = engine.nextEvent() { events += ChatEvent.from(event, reading: message(from:), opening: directMessage(from:),
                                                                      presence: presence(from:), typing: typing(from:)) }
        return events
    }
}
