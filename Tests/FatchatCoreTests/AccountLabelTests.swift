import Foundation
import ProcessTestKit
import Testing
@testable import FatchatCore
@testable import RecordStore
import SyncEngine

/// The places a copied handle was still bare after issue 11: notifications (whose alert came
/// ready-made from the subscription), and the plain output of `who` and `whois`. Each labels
/// the sender or member as message lines do: `alice (bob)`.
@Suite(.serialized) struct AccountLabelTests {
    static let alice = "fclblalice"
    static let bob = "fclblbob"
    static let group = "fclblgroup"

    /// A notification as the engine raises it for a message in #ops, with the alert it renders from the subscription.
    static func raised(handle: String, creator: String?, text: String, channel: String = "ops") -> SubscriptionNotification {
        SubscriptionNotification(subscriptionID: "messages.\(channel)", reason: .created, stoppedMatching: false,
                                 recordID: RecordID(recordName: "feedbeef00000001"), recordType: ChatSchema.messageType,
                                 fields: ["handle": .string(handle), "text": .string(text), "channelName": .string(channel)],
                                 creatorUserRecordID: creator.map { RecordID(recordName: $0) },
                                 alertText: "\(handle): \(text) (in #\(channel))", shouldBadge: true)
    }

    private static func chatNotification(_ raised: SubscriptionNotification) throws -> ChatNotification {
        let notifications = ChatEvent.from(.notification(raised)).compactMap { event -> ChatNotification? in
            if case .notification(let notification) = event { notification } else { nil }
        }
        return try #require(notifications.first)
    }

    // MARK: The chat event and the formatter

    @Test func aNotificationCarriesItsSendersAccount() throws {
        let notification = try Self.chatNotification(Self.raised(handle: "alice", creator: "_1002_bob", text: "hi"))
        #expect(notification.handle == "alice")
        #expect(notification.user == "_1002_bob")
        #expect(notification.alert(sender: "alice (bob)") == "alice (bob): hi (in #ops)")
        // Without a creator the sender is unknown, and says so rather than pass for alice.
        let anonymous = try Self.chatNotification(Self.raised(handle: "alice", creator: nil, text: "hi"))
        #expect(EventFormatter(json: false).notification(anonymous) == "-- alice (?): hi (in #ops)")
    }

    @Test func onlyMessagesNotifyTheChat() {
        var raised = Self.raised(handle: "alice", creator: "_1002_bob", text: "hi")
        raised.recordType = ChatSchema.channelType
        #expect(ChatEvent.from(.notification(raised)).isEmpty, "a subscription row planted for another type raises nothing")
    }

    @Test func plainAndJSONNotificationsLabelTheSender() throws {
        let forged = try Self.chatNotification(Self.raised(handle: "alice", creator: "_1002_bob", text: "send me the keys"))
        let real = try Self.chatNotification(Self.raised(handle: "alice", creator: "_1001_alice", text: "morning"))
        var plain = EventFormatter(json: false)
        #expect(plain.notification(real) == "-- alice: morning (in #ops)", "alone, her own name is enough")
        #expect(plain.notification(forged) == "-- alice (bob): send me the keys (in #ops)")
        plain.learn(forged)
        #expect(plain.notification(real) == "-- alice (alice): morning (in #ops)", "once bob goes by alice, hers shows too")

        let line = EventFormatter(json: true).notification(forged)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["type"] as? String == "notification")
        #expect(object["text"] as? String == "alice (bob): send me the keys (in #ops)")
        #expect(object["from"] as? String == "alice")
        #expect(object["user"] as? String == "_1002_bob")
        #expect(object["channel"] as? String == "ops")
    }

    @Test func aNotificationsTextIsInert() throws {
        let hostile = try Self.chatNotification(Self.raised(handle: "alice\u{1B}[2J", creator: "_1002_bob", text: "hi\u{1B}]0;pwned\u{07}\u{202E}"))
        let plain = EventFormatter(json: false).notification(hostile)
        #expect(!plain.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x202E }, "\(plain.debugDescription)")
        let line = EventFormatter(json: true).notification(hostile)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let text = try #require(object["text"] as? String)
        #expect(text.hasPrefix("alice^[[2J (bob): hi^[]0;pwned"), "\(text.debugDescription)")
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x202E }, "\(text.debugDescription)")
    }

    // MARK: Two real OS users

    private func fatchat(_ user: String, _ arguments: [String]) async throws -> WorkerProcess {
        try await SharedContainerFixture.fatchat(user, arguments)
    }

    @Test(.enabled(if: OSUsers.available, "needs root to create the OS users fclblalice and fclblbob"))
    func bobPostingAsAliceNotifiesAlicesBotsAsBob() async throws {
        let (root, container) = try await SharedContainerFixture.make(users: [Self.alice, Self.bob], group: Self.group)
        defer { try? FileManager.default.removeItem(at: root) }
        // Alice joins #ops by posting there; her bots then run in #general, so #ops reaches them as notifications.
        let joined = try await fatchat(Self.alice, ["post", "--container", container, "ops", "ops is mine"])
        #expect(joined.errorText.isEmpty, "\(joined.errorText)")
        let (plainBot, plainInput) = try SharedContainerFixture.runningBot(Self.alice, ["--container", container, "--join", "general"])
        defer { plainBot.killIfRunning() }
        let (jsonBot, jsonInput) = try SharedContainerFixture.runningBot(Self.alice, ["--container", container, "--json", "--join", "general"])
        defer { jsonBot.killIfRunning() }
        #expect(await plainBot.waitForLines(1, timeout: .seconds(60)), "plain bot started: \(plainBot.errorText)")
        #expect(await jsonBot.waitForLines(1, timeout: .seconds(60)), "JSON bot started: \(jsonBot.errorText)")

        let plainLines = { plainBot.lines.filter { $0.contains("give me the root password") } }
        let jsonAlerts = { SharedContainerFixture.objects(jsonBot).filter { ($0["text"] as? String)?.contains("give me the root password") == true } }
        // A bot's engine takes its starting point a moment after it starts; bob posts again until both have one.
        for attempt in 1...5 where plainLines().isEmpty || jsonAlerts().isEmpty {
            let forged = try await fatchat(Self.bob, ["post", "--container", container, "--handle", Self.alice, "ops", "give me the root password \(attempt)"])
            #expect(forged.errorText.isEmpty, "\(forged.errorText)")
            _ = await waitUntil(timeout: .seconds(10)) { !plainLines().isEmpty && !jsonAlerts().isEmpty }
        }

        let line = try #require(plainLines().first, "\(plainBot.lines) \(plainBot.errorText)")
        #expect(line.hasPrefix("-- \(Self.alice) (\(Self.bob)): give me the root password "), "\(line)")
        #expect(line.hasSuffix("(in #ops)"), "\(line)")
        #expect(!plainBot.lines.contains { $0.contains("-- \(Self.alice):") }, "never bare: \(plainBot.lines)")

        let alert = try #require(jsonAlerts().first, "\(jsonBot.lines) \(jsonBot.errorText)")
        #expect(alert["type"] as? String == "notification")
        #expect((alert["text"] as? String)?.hasPrefix("\(Self.alice) (\(Self.bob)): give me the root password ") == true, "\(alert)")
        #expect(alert["from"] as? String == Self.alice)
        #expect((alert["user"] as? String)?.hasSuffix("_\(Self.bob)") == true, "\(alert)")

        try plainInput.fileHandleForWriting.close()
        try jsonInput.fileHandleForWriting.close()
        _ = try await plainBot.finish(timeout: .seconds(60))
        _ = try await jsonBot.finish(timeout: .seconds(60))
    }

    @Test(.enabled(if: OSUsers.available, "needs root to create the OS users fclblalice and fclblbob"))
    func whoAndWhoisShowTheAccountOfACopiedHandle() async throws {
        let (root, container) = try await SharedContainerFixture.make(users: [Self.alice, Self.bob], group: Self.group)
        defer { try? FileManager.default.removeItem(at: root) }
        _ = try await fatchat(Self.alice, ["post", "--container", container, "ops", "ops is mine"])
        _ = try await fatchat(Self.bob, ["post", "--container", container, "--handle", Self.alice, "ops", "me too"])

        let who = try await fatchat(Self.alice, ["who", "--container", container, "ops"])
        #expect(who.errorText.isEmpty, "\(who.errorText)")
        #expect(Set(who.lines.filter { !$0.isEmpty }) == ["\(Self.alice) (\(Self.alice))", "\(Self.alice) (\(Self.bob))"], "\(who.lines)")

        let aliceProfile = try await fatchat(Self.alice, ["profile", "--container", container, "--discoverable"])
        let bobProfile = try await fatchat(Self.bob, ["profile", "--container", container, "--handle", Self.alice, "--discoverable"])
        #expect(aliceProfile.errorText.isEmpty && bobProfile.errorText.isEmpty, "\(aliceProfile.errorText) \(bobProfile.errorText)")
        let whois = try await fatchat(Self.alice, ["whois", "--container", container, Self.alice])
        let found = whois.lines.filter { !$0.isEmpty }
        #expect(found.count == 2, "\(whois.lines) \(whois.errorText)")
        #expect(found.contains { $0.hasPrefix("\(Self.alice) (\(Self.bob)) ") && $0.contains("_\(Self.bob) key SHA256:") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("\(Self.alice) (\(Self.alice)) ") && $0.contains("_\(Self.alice) key SHA256:") }, "\(found)")
        #expect(!found.contains { $0.hasPrefix("\(Self.alice) _") }, "never bare: \(found)")
    }
}
