import FatchatCore
import Foundation
import RecordStore

/// The lines `admin subscriptions` prints: one per subscription of the current user.
enum SubscriptionListing {
    static func lines(_ database: RecordDatabase) throws -> [String] {
        try database.allSubscriptions().sorted { $0.subscriptionID < $1.subscriptionID }.map { subscription in
            let what: String
            switch subscription.kind {
            case .query(let type, let predicate, let options, let zone):
                let fires = [(QuerySubscriptionOptions.firesOnRecordCreation, "create"), (.firesOnRecordUpdate, "update"),
                             (.firesOnRecordDeletion, "delete"), (.firesOnce, "once")]
                    .filter { options.contains($0.0) }.map(\.1).joined(separator: ",")
                what = "query \(type) where \(predicate) on \(fires)" + (zone.map { " in zone \($0.zoneName)" } ?? "")
            case .zone(let zone, let type):
                what = "zone \(zone.zoneName)" + (type.map { " (\($0) only)" } ?? "")
            }
            let info = subscription.notificationInfo
            let alert = info.alertBody ?? info.alertLocalizationKey.map { "\($0)(\(info.alertLocalizationArgs.joined(separator: ", ")))" } ?? "no alert"
            return Sanitizer.inert("\(subscription.subscriptionID): \(what); alert \(alert)\(info.shouldBadge ? ", badge" : "")")
        }
    }
}
