import FatchatCore
import Foundation
import Synchronization
import SyncEngine
import Testing

/// The one `poll()` loop the client, the bot and `read --follow` share: descriptors, timers, wakes and signals.
///
/// Each test has a guard timer that stops a loop that would otherwise wait forever, and
/// says so: a loop that misses what it waits for fails the test instead of hanging it.
@Suite struct EventLoopTests {
    /// Stops `loop` after `seconds` and records that the guard, not the test's event, ended it.
    final class Guard {
        private(set) var fired = false
        init(_ loop: EventLoop, seconds: Int64 = 10) {
            loop.schedule(after: .seconds(seconds)) { [unowned loop, unowned self] in
                fired = true
                loop.stop()
            }
        }
    }

    @Test func aTimerFiresNoEarlierThanItsDelayAndTimersFireInDeadlineOrder() throws {
        let loop = try EventLoop()
        let started = ContinuousClock.now
        var fired: [String] = []
        var lateFiredAfter: Duration?
        loop.schedule(after: .milliseconds(150)) { [unowned loop] in
            fired.append("late")
            lateFiredAfter = ContinuousClock.now - started
            loop.stop()
        }
        loop.schedule(after: .milliseconds(50)) { fired.append("early") }
        let guardTimer = Guard(loop)
        try loop.run()
        #expect(!guardTimer.fired)
        #expect(fired == ["early", "late"])
        #expect((lateFiredAfter ?? .zero) >= .milliseconds(150))
    }

    @Test func aRepeatingTimerFiresUntilCancelled() throws {
        let loop = try EventLoop()
        var count = 0
        var ticker: EventLoop.Registration?
        ticker = loop.schedule(after: .milliseconds(5), repeating: .milliseconds(5)) { [unowned loop] in
            count += 1
            guard count == 3, let ticker else { return }
            loop.cancel(ticker)
            // Stop twenty periods after the cancel, not at a fixed time from the start: a tick that
            // comes late on a loaded machine must not race the stop. A ticker that was not cancelled
            // is due before the stop even if the thread stalls, and timers fire in deadline order.
            loop.schedule(after: .milliseconds(100)) { [unowned loop] in loop.stop() }
        }
        let guardTimer = Guard(loop)
        try loop.run()
        #expect(!guardTimer.fired)
        #expect(count == 3)
    }

    @Test func aTimerStillFiresWhileADescriptorIsAlwaysReadable() throws {
        // As when messages flood in: the loop never waits, yet the tick must still come.
        let loop = try EventLoop()
        let flood = try WakePipe()
        flood.wake()
        var floodTurns = 0
        loop.watch(flood.readDescriptor) { [unowned loop] _ in
            floodTurns += 1
            // A loop whose timers wait for a quiet poll() would never tick: end it, and fail below.
            if floodTurns == 200_000 { loop.stop() }
        }
        var ticked = false
        loop.schedule(after: .milliseconds(50)) { [unowned loop] in
            ticked = true
            loop.stop()
        }
        try loop.run()
        #expect(ticked)
        #expect(floodTurns > 1)
    }

    @Test func aDescriptorHandlerRunsWhenItBecomesReadableOnly() throws {
        let loop = try EventLoop()
        let pipe = try WakePipe()
        var received: [UInt8] = []
        var earlyCalls = 0
        var written = false
        loop.watch(pipe.readDescriptor) { [unowned loop] readiness in
            if !written { earlyCalls += 1 }
            #expect(readiness.isReadable)
            received += pipe.drain()
            loop.stop()
        }
        // Nothing is readable for the first 100 ms; then a byte arrives.
        loop.schedule(after: .milliseconds(100)) {
            written = true
            pipe.wake(42)
        }
        let guardTimer = Guard(loop)
        try loop.run()
        #expect(!guardTimer.fired)
        #expect(earlyCalls == 0)
        #expect(received == [42])
    }

    @Test func aHungUpDescriptorSaysSo() throws {
        let loop = try EventLoop()
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        close(fds[1])
        var readiness: EventLoop.Readiness?
        loop.watch(fds[0]) { [unowned loop] in
            readiness = $0
            loop.stop()
        }
        let guardTimer = Guard(loop)
        try loop.run()
        #expect(!guardTimer.fired)
        #expect(readiness?.isHungUp == true)
    }

    @Test func aCancelledWatchIsNotCalledAgain() throws {
        let loop = try EventLoop()
        let pipe = try WakePipe()
        pipe.wake()
        var calls = 0
        var watch: EventLoop.Registration?
        watch = loop.watch(pipe.readDescriptor) { [unowned loop] _ in
            calls += 1
            // The byte is left unread, so a watch still in place would be called every turn.
            if let watch { loop.cancel(watch) }
        }
        loop.schedule(after: .milliseconds(100)) { [unowned loop] in loop.stop() }
        try loop.run()
        #expect(calls == 1)
    }

    @Test func aWakeFromAnotherThreadReturnsTheLoopFromItsWait() throws {
        let loop = try EventLoop()
        let waker = loop.waker
        var woken = false
        loop.onWake { [unowned loop] in
            woken = true
            loop.stop()
        }
        let guardTimer = Guard(loop)
        let thread = Thread {
            Thread.sleep(forTimeInterval: 0.1)
            waker.wake()
        }
        thread.start()
        try loop.run()
        #expect(woken)
        #expect(!guardTimer.fired, "the wake did not end the wait")
    }

    /// A loop that stops at the first signal it is handed, and the descriptor a signal handler writes to.
    private func signalLoop() throws -> (loop: EventLoop, descriptor: Int32, received: () -> [Int32]) {
        let loop = try EventLoop()
        var signals: [Int32] = []
        let descriptor = try loop.receiveSignals { [unowned loop] signal in
            signals.append(signal)
            loop.stop()
        }
        return (loop, descriptor, { signals })
    }

    @Test func aSignalThatArrivesWhileAHandlerIsBusyIsDeliveredAfterItReturns() throws {
        let (loop, descriptor, received) = try signalLoop()
        // The byte a signal handler would write lands while the timer's handler is busy,
        // after the loop's last poll(); nothing else happens afterwards.
        let landed = DispatchSemaphore(value: 0)
        loop.schedule(after: .milliseconds(10)) {
            let thread = Thread {
                var byte = UInt8(SIGWINCH)
                _ = write(descriptor, &byte, 1)
                landed.signal()
            }
            thread.start()
            landed.wait()
        }
        let guardTimer = Guard(loop)
        try loop.run()
        #expect(received() == [SIGWINCH])
        #expect(!guardTimer.fired, "the signal was missed until something else woke the loop")
    }

    @Test func aRealSignalWrittenByItsHandlerReachesTheLoop() throws {
        let (loop, descriptor, received) = try signalLoop()
        SignalRoute.install(SIGUSR1, writingTo: descriptor)
        defer { SignalRoute.remove(SIGUSR1) }
        loop.schedule(after: .milliseconds(10)) { kill(getpid(), SIGUSR1) }
        let guardTimer = Guard(loop)
        try loop.run()
        #expect(received() == [SIGUSR1])
        #expect(!guardTimer.fired)
    }

    @Test func stopBeforeRunReturnsAtOnceAndALoopRunsAgainAfterStopping() throws {
        let loop = try EventLoop()
        var fired = 0
        loop.stop()
        loop.schedule(after: .milliseconds(1)) { [unowned loop] in
            fired += 1
            loop.stop()
        }
        try loop.run()
        #expect(fired == 0)
        try loop.run()
        #expect(fired == 1)
    }

    @Test func aHandlerThatThrowsEndsTheRunWithItsError() throws {
        struct Boom: Error, Equatable {}
        let loop = try EventLoop()
        loop.schedule(after: .milliseconds(1)) { throw Boom() }
        let guardTimer = Guard(loop)
        #expect(throws: Boom()) { try loop.run() }
        #expect(!guardTimer.fired)
    }
}

/// A signal handler for the test above: it writes the signal's number to one descriptor.
///
/// The descriptor is kept in an atomic stored before the handler is installed, so
/// the handler does nothing but an atomic load and `write(2)`.
enum SignalRoute {
    private static let descriptor = Atomic<Int32>(-1)

    static func install(_ signal: Int32, writingTo fd: Int32) {
        descriptor.store(fd, ordering: .sequentiallyConsistent)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { signal in
            var byte = UInt8(truncatingIfNeeded: signal)
            _ = write(SignalRoute.descriptor.load(ordering: .relaxed), &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        sigaction(signal, &action, nil)
    }

    static func remove(_ signal: Int32) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = SIG_DFL
        sigaction(signal, &action, nil)
        descriptor.store(-1, ordering: .sequentiallyConsistent)
    }
}
