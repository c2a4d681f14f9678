import FatchatCore
import Foundation

extension ChatScreen {
    /// Whether an error means another process holds the shared file locked, so the same read works later.
    static func isLocked(_ error: any Error) -> Bool { ChatClient.isLockedOut(error) }

    /// A channel or conversation could not be read because the shared file is locked: the screen says so,
    /// and ``tick(now:)`` tries again.
    ///
    /// The session is already on the new channel, so what is typed now goes
    /// there; the old channel's lines are cleared rather than shown under its name.
    func waitForLock(toShow buffer: Buffer) {
        guard sync.lockedBuffer != buffer else { return }
        sync.lockedBuffer = buffer
        // It is what the screen is about now, though nothing of it could be read yet.
        roster.shown = buffer
        state.messages = []
        state.members = []
        window = HistoryWindow()
        refreshChannelList()
        notice("\(label(buffer)) is shown once the database is free: another process holds it locked")
        describeWait()
    }

    /// Shows the channel or conversation the lock held up, if the lock is gone now.
    func retryLockedChannel() {
        guard let buffer = sync.lockedBuffer else { return }
        guard buffer == shown else {
            sync.lockedBuffer = nil
            describeWait()
            return
        }
        select(buffer)
    }
}
