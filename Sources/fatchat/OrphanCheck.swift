import FatchatCore
import Foundation
import RecordStore

/// The `admin check` lines about subscriptions whose parent record is gone, whoever owns them.
enum OrphanCheck {
    /// One line per orphan; each owner's client deletes its own the next time it runs.
    static func problems(_ database: RecordDatabase) throws -> [String] {
        try database.orphanedSubscriptions().map { orphan in
            Sanitizer.inert("subscription \(orphan.subscriptionID) of \(orphan.owner) is for \(orphan.parent.recordName), which is gone or was created again; it never fires, and its owner's client deletes it")
        }
    }
}
