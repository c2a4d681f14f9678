import FatchatResources
import Foundation
import Testing
@testable import RecordStore

/// Runs `body` on the database, then returns the changes it made, as the sync engine would fetch them.
private func changes(in db: RecordDatabase, _ body: () throws -> Void) throws -> [RecordChange] {
    let token = try db.currentChangeToken()
    try body()
    return try db.fetchChanges(since: token).changes
}

private func message(_ name: String, channel: String, text: String, sender: String = "bob") -> Record {
    var m = Record(recordType: "Message", recordID: RecordID(recordName: name))
    m["channel"] = .reference(Reference(recordID: RecordID(recordName: channel)))
    m["channelName"] = .string(channel)
    m["text"] = .string(text)
    m["sender"] = .string(sender)
    return m
}

struct SubscriptionTests {
    let temp: TemporaryContainer
    let db: RecordDatabase
    let strings: AlertStrings

    init() throws {
        temp = try TemporaryContainer()
        db = temp.container.privateDatabase
        strings = AlertStrings(FatchatResources.alertFormats)
        for channel in ["general", "random"] { try db.save(Record(recordType: "Channel", recordID: RecordID(recordName: channel))) }
    }

    private func general(_ options: QuerySubscriptionOptions, id: String = "s1", info: NotificationInfo = NotificationInfo()) throws -> Subscription {
        Subscription(subscriptionID: id, recordType: "Message",
                     predicate: try QueryPredicate(format: "channel == %@", RecordID(recordName: "general")),
                     options: options, notificationInfo: info)
    }

    @Test func creationRendersLocalizedAlertWithDesiredFieldsAndBadge() throws {
        let info = NotificationInfo(alertLocalizationKey: "message_alert", alertLocalizationArgs: ["sender", "text", "channelName"],
                                    shouldBadge: true, desiredKeys: ["text", "nothere"])
        let batch = try changes(in: db) {
            try db.save(message("m1", channel: "general", text: "hello"))
            try db.save(message("m2", channel: "random", text: "elsewhere"))
        }
        let result = Subscription.evaluate(batch, subscriptions: [try general(.firesOnRecordCreation, info: info)], strings: strings)
        #expect(result.notifications.count == 1)
        let n = try #require(result.notifications.first)
        #expect(n.reason == .created && !n.stoppedMatching)
        #expect(n.recordID == RecordID(recordName: "m1") && n.recordType == "Message" && n.subscriptionID == "s1")
        #expect(n.fields == ["text": "hello"])
        #expect(n.alertText == "bob: hello (in #general)")
        #expect(n.shouldBadge)
        #expect(result.subscriptionsToDelete.isEmpty)
    }

    @Test func updatesReportStayingStartingAndStoppingToMatch() throws {
        try db.save(message("m1", channel: "general", text: "one"))
        try db.save(message("m2", channel: "random", text: "two"))
        let subscription = try general(.firesOnRecordUpdate)
        func update(_ name: String, channel: String) throws -> [SubscriptionNotification] {
            var r = try db.record(for: RecordID(recordName: name))
            r["channel"] = .reference(Reference(recordID: RecordID(recordName: channel)))
            r["text"] = .string("edited")
            let batch = try changes(in: db) { try db.save(r) }
            return Subscription.evaluate(batch, subscriptions: [subscription]).notifications
        }
        let stays = try update("m1", channel: "general")
        #expect(stays.map(\.reason) == [.updated] && stays.map(\.stoppedMatching) == [false])
        let stops = try update("m1", channel: "random")
        #expect(stops.map(\.reason) == [.updated] && stops.map(\.stoppedMatching) == [true])
        #expect(try update("m1", channel: "random").isEmpty, "never matched: nothing")
        let starts = try update("m2", channel: "general")
        #expect(starts.map(\.recordID.recordName) == ["m2"] && starts.map(\.stoppedMatching) == [false])

        let createOnly = try general(.firesOnRecordCreation)
        var r = try db.record(for: RecordID(recordName: "m2"))
        r["text"] = "again"
        let batch = try changes(in: db) { try db.save(r) }
        #expect(Subscription.evaluate(batch, subscriptions: [createOnly]).notifications.isEmpty)
    }

    @Test func deletionUsesTheFieldsBeforeTheDelete() throws {
        try db.save(message("m1", channel: "general", text: "bye"))
        try db.save(message("m2", channel: "random", text: "other"))
        let info = NotificationInfo(alertLocalizationKey: "gone", alertLocalizationArgs: ["channelName"], desiredKeys: ["text"])
        let batch = try changes(in: db) {
            try db.deleteRecord(withID: RecordID(recordName: "m1"))
            try db.deleteRecord(withID: RecordID(recordName: "m2"))
        }
        let result = Subscription.evaluate(batch, subscriptions: [try general(.firesOnRecordDeletion, info: info)],
                                           strings: AlertStrings(["gone": "A message was deleted in #%@"]))
        #expect(result.notifications.map(\.reason) == [.deleted])
        #expect(result.notifications.first?.fields == ["text": "bye"])
        #expect(result.notifications.first?.alertText == "A message was deleted in #general")
        let notOnDelete = Subscription.evaluate(batch, subscriptions: [try general([.firesOnRecordCreation, .firesOnRecordUpdate])])
        #expect(notOnDelete.notifications.isEmpty)
    }

    @Test func firesOnceFiresOnceAndAsksToBeDeleted() throws {
        let once = try general([.firesOnRecordCreation, .firesOnce], id: "once")
        let always = try general(.firesOnRecordCreation, id: "always")
        try db.save(once)
        try db.save(always)
        let batch = try changes(in: db) {
            try db.save(message("m1", channel: "general", text: "a"))
            try db.save(message("m2", channel: "general", text: "b"))
        }
        let result = Subscription.evaluate(batch, subscriptions: try db.allSubscriptions())
        #expect(result.notifications.filter { $0.subscriptionID == "once" }.map(\.recordID.recordName) == ["m1"])
        #expect(result.notifications.filter { $0.subscriptionID == "always" }.count == 2)
        #expect(result.subscriptionsToDelete == ["once"])
        for id in result.subscriptionsToDelete { try db.deleteSubscription(withID: id) }
        #expect(try db.allSubscriptions().map(\.subscriptionID) == ["always"])
    }

    @Test func zoneSubscriptionSeesEveryChangeInItsZoneOptionallyOneType() throws {
        let work = ZoneID(zoneName: "work")
        try db.saveZone(work)
        let anyType = Subscription(subscriptionID: "z", zone: work, notificationInfo: NotificationInfo(alertBody: "work changed"))
        let tasks = Subscription(subscriptionID: "t", zone: work, recordType: "Task")
        let taskID = RecordID(recordName: "t1", zoneID: work)
        let batch = try changes(in: db) {
            var task = Record(recordType: "Task", recordID: taskID)
            task["title"] = "write tests"
            try db.save(task)
            try db.save(Record(recordType: "Note", recordID: RecordID(recordName: "n1", zoneID: work)))
            try db.save(Record(recordType: "Task", recordID: RecordID(recordName: "elsewhere")))
            var again = try db.record(for: taskID)
            again["title"] = "done"
            try db.save(again)
            try db.deleteRecord(withID: taskID)
        }
        let result = Subscription.evaluate(batch, subscriptions: [anyType, tasks])
        let z = result.notifications.filter { $0.subscriptionID == "z" }
        #expect(z.map(\.reason) == [.created, .created, .updated, .deleted])
        #expect(z.allSatisfy { $0.alertText == "work changed" })
        #expect(result.notifications.filter { $0.subscriptionID == "t" }.map(\.reason) == [.created, .updated, .deleted])
    }

    @Test func querySubscriptionCanBeLimitedToAZone() throws {
        let work = ZoneID(zoneName: "work")
        try db.saveZone(work)
        let subscription = Subscription(subscriptionID: "q", recordType: "Task", options: .firesOnRecordCreation, zone: work)
        let batch = try changes(in: db) {
            try db.save(Record(recordType: "Task", recordID: RecordID(recordName: "a", zoneID: work)))
            try db.save(Record(recordType: "Task", recordID: RecordID(recordName: "b")))
            try db.save(Record(recordType: "Note", recordID: RecordID(recordName: "c", zoneID: work)))
        }
        #expect(Subscription.evaluate(batch, subscriptions: [subscription]).notifications.map(\.recordID.recordName) == ["a"])
    }

    @Test func alertTextPrefersBodyThenLocalizedFormat() throws {
        let batch = try changes(in: db) { try db.save(message("m1", channel: "general", text: "hi", sender: "ann")) }
        func alert(_ info: NotificationInfo) throws -> String? {
            Subscription.evaluate(batch, subscriptions: [try general(.firesOnRecordCreation, info: info)], strings: strings).notifications.first?.alertText
        }
        #expect(try alert(NotificationInfo(alertBody: "plain", alertLocalizationKey: "message_alert")) == "plain")
        #expect(try alert(NotificationInfo(alertLocalizationKey: "mention_alert", alertLocalizationArgs: ["sender", "channelName", "text"])) == "ann mentioned you in #general: hi")
        #expect(try alert(NotificationInfo(alertLocalizationKey: "UNKNOWN %@!", alertLocalizationArgs: ["missing"])) == "UNKNOWN !")
        #expect(try alert(NotificationInfo()) == nil)
    }

    @Test func subscriptionsAreStoredFaithfullyAndBelongToTheirOwner() throws {
        let args: [any PredicateArgument] = [RecordID(recordName: "general", zoneID: ZoneID(zoneName: "work")), Date(timeIntervalSince1970: 12.5),
                                             Location(latitude: 1.5, longitude: 2.5, altitude: 3), [1, 2], "text", 2.25, Int64(7)]
        let predicate = try QueryPredicate(format: "channel == %@ AND when > %@ AND distanceToLocation:fromLocation:(place, %@) < 10 AND n IN %@ AND s BEGINSWITH %@ AND d < %@ AND i != %@",
                                           argumentArray: args)
        let info = NotificationInfo(alertLocalizationKey: "message_alert", alertLocalizationArgs: ["sender"], shouldBadge: true, desiredKeys: ["text"])
        let query = Subscription(subscriptionID: "q", recordType: "Message", predicate: predicate,
                                 options: [.firesOnRecordCreation, .firesOnce], zone: ZoneID(zoneName: "_defaultZone"), notificationInfo: info)
        try db.saveZone(ZoneID(zoneName: "work"))
        let zone = Subscription(subscriptionID: "z", zone: ZoneID(zoneName: "work"), recordType: "Task")
        try db.save(query)
        try db.save(zone)
        try db.storage.write { try $0.saveSubscription(id: "theirs", owner: "_4242_someone", body: "{}") }
        let stored = try db.allSubscriptions()
        #expect(stored == [query, zone])
        #expect(stored.first?.kind == query.kind && stored.first?.notificationInfo == info)

        var replaced = zone
        replaced.notificationInfo.alertBody = "new"
        try db.save(replaced)
        #expect(try db.allSubscriptions().last?.notificationInfo.alertBody == "new")
        #expect((try? db.deleteSubscription(withID: "theirs")) == nil, "another user's subscription is not mine to delete")
        try db.deleteSubscription(withID: "q")
        #expect(try db.allSubscriptions().map(\.subscriptionID) == ["z"])
        let missing = #expect(throws: StoreError.self) { try db.deleteSubscription(withID: "q") }
        #expect(missing?.code == .unknownItem)
    }

    @Test func invalidSubscriptionsAreRefused() throws {
        let pub = temp.container.publicDatabase
        let zoneInPublic = #expect(throws: StoreError.self) { try pub.save(Subscription(subscriptionID: "z", zone: .default)) }
        #expect(zoneInPublic?.code == .invalidArguments)
        let noZone = #expect(throws: StoreError.self) { try db.save(Subscription(subscriptionID: "z", zone: ZoneID(zoneName: "nope"))) }
        #expect(noZone?.code == .zoneNotFound)
        let firesOnNothing = #expect(throws: StoreError.self) { try db.save(Subscription(subscriptionID: "q", recordType: "Message", options: .firesOnce)) }
        #expect(firesOnNothing?.code == .invalidArguments)
        #expect(throws: StoreError.self) { try db.save(Subscription(subscriptionID: "", recordType: "Message", options: .firesOnRecordCreation)) }
        #expect(throws: StoreError.self) {
            try db.save(Subscription(subscriptionID: "k", recordType: "Message", options: .firesOnRecordCreation,
                                     notificationInfo: NotificationInfo(desiredKeys: ["bad key"])))
        }
    }

    @Test func positionalAndLiteralPercentFormats() {
        let table = AlertStrings(["mention": "%2$@: %1$@ mentioned you", "k": "100%% of %@ and %3$@"])
        #expect(table.render("mention", ["ann", "general"]) == "general: ann mentioned you")
        #expect(table.render("k", ["a", "b", "c"]) == "100% of a and c")
        #expect(table.render("unknown %@", []) == "unknown ")
    }
}
