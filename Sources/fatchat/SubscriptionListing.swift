import FatchatCore
import Foundation
import RecordStore

/// The lines `admin subscriptions` prints.
enum SubscriptionListing {
    static func lines(_ database: RecordDatabase) throws -> [String] {
        []
    }
}
