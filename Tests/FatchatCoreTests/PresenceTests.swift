import Foundation
@testable import FatchatCore
@testable import RecordStore
import Testing

/// Presence and typing: the beacon's timing, the throttle, reading records back from a real container.
struct PresenceTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func theBeaconBeatsOnceAMinuteAndGoesIdleAfterItsTime() {
        var beacon = PresenceBeacon(autoAwayAfter: 600, now: start)
        #expect(beacon.start(now: start) == .init(state: .online, reason: ""))
        // Ticks in between write nothing: at most one write a minute.
        #expect((1..<60).compactMap { beacon.tick(now: start + Double($0)) }.isEmpty)
        #expect(beacon.tick(now: start + 60) == .init(state: .online, reason: ""))
        #expect(beacon.tick(now: start + 61) == nil)
        #expect(beacon.activity(now: start + 100) == nil, "activity while online writes nothing")
        #expect(beacon.tick(now: start + 120)?.state == .online, "the next heartbeat")
        #expect(beacon.tick(now: start + 699)?.state == .online, "a heartbeat, not yet idle")
        #expect(beacon.tick(now: start + 700) == .init(state: .away, reason: PresenceBeacon.idleReason))
        #expect(beacon.activity(now: start + 705) == .init(state: .online, reason: ""))
    }

    /// A quiet client ticks only when its beacon says a write is due. Over an hour of keys, `/away`, `/back`
    /// and idling, it must write what a beacon ticked every second writes, each within the same second.
    @Test func aBeaconTickedOnlyWhenDueWritesWhatOneTickedEverySecondDoes() {
        /// An hour: keys at 200 and 2000 s, away by choice from 1000 to 1400 s; ticked each second that `ticks` allows.
        func writes(ticks: (PresenceBeacon, Date) -> Bool) -> [String] {
            var beacon = PresenceBeacon(autoAwayAfter: 300, now: start)
            var written: [String] = []
            func note(_ write: PresenceBeacon.Write?, _ second: Int) {
                if let write { written.append("\(second) \(write.state) \(write.reason)") }
            }
            note(beacon.start(now: start), 0)
            for second in 1...3600 {
                let now = start + Double(second)
                switch second {
                case 200, 2000: note(beacon.activity(now: now), second)
                case 1000: note(beacon.away("lunch", now: now), second)
                case 1400: note(beacon.back(now: now), second)
                default: break
                }
                if ticks(beacon, now) { note(beacon.tick(now: now), second) }
            }
            return written
        }
        let everySecond = writes { _, _ in true }
        let whenDue = writes { beacon, now in beacon.nextDue <= now }
        #expect(whenDue == everySecond)
        #expect(everySecond.count > 60, "a heartbeat a minute, and the changes")
        #expect(everySecond.contains("500 away idle"), "idle 300 s after the key at 200 s")
        #expect(everySecond.contains("2300 away idle"))
        #expect(everySecond.contains("1060 away lunch"), "away by choice still beats")
    }

    @Test func awayByChoiceStaysUntilBackAndIdleNeverOverridesIt() {
        var beacon = PresenceBeacon(autoAwayAfter: 60, now: start)
        _ = beacon.start(now: start)
        #expect(beacon.away("lunch", now: start + 1) == .init(state: .away, reason: "lunch"))
        #expect(beacon.activity(now: start + 2) == nil, "a key does not undo /away")
        #expect(beacon.tick(now: start + 500)?.reason == "lunch")
        #expect(beacon.isAwayByChoice)
        #expect(beacon.back(now: start + 501) == .init(state: .online, reason: ""))
        #expect(PresenceBeacon(autoAwayAfter: 0, now: start).autoAwayAfter == nil, "0 turns auto-away off")
    }

    @Test func aStaleHeartbeatReadsAsOffline() {
        let seen = start
        let presence = Presence(user: UserID(rawValue: "_1001_ada"), handle: "ada", state: .away, reason: "lunch", seen: seen)
        #expect(presence.state(at: seen + 149) == .away)
        #expect(presence.state(at: seen + 151) == .offline)
        #expect(presence.describe(at: seen + 10) == "away: lunch")
        #expect(presence.describe(at: seen + 1000).hasPrefix("offline, last seen "))
    }

    @Test func typingIsAnnouncedAtMostEveryThreeSecondsPerChannel() throws {
        var throttle = TypingThrottle()
        let general = try ChannelName("general"), ops = try ChannelName("ops")
        var announced: [Double] = []
        for step in 0..<50 where throttle.shouldAnnounce(in: general, now: start + Double(step) * 0.2) {
            announced.append(Double(step) * 0.2)
        }
        #expect(announced.map { $0.rounded() } == [0, 3, 6, 9], "\(announced)")
        let otherChannel = throttle.shouldAnnounce(in: ops, now: start + 9.5)
        #expect(otherChannel, "another channel is announced at once")
        let sameAgain = throttle.shouldAnnounce(in: ops, now: start + 9.55)
        #expect(!sameAgain)
        throttle.reset()
        let afterSend = throttle.shouldAnnounce(in: ops, now: start + 9.6)
        #expect(afterSend, "after a line is sent the next key is announced")
    }

    @Test func presenceAndTypingGoToTheSharedFileAndReadBackVouchedFor() async throws {
        let sandbox = try ChatSandbox()
        let client = try sandbox.client("ada", handle: "ada")
        defer { client.stop() }
        // The engine's first fetch fixes where its feed starts; what is written before it is not an event.
        var events: [ChatEvent] = []
        let started = Date() + 120
        while Date() < started, !events.contains(where: { if case .status = $0 { true } else { false } }) {
            events += client.drainEvents()
            try await Task.sleep(for: .milliseconds(20))
        }
        try client.join(try ChannelName("general"))
        client.flush()
        let before = try client.messages(in: try ChannelName("general")).messages.count
        client.publishPresence(.away, reason: "lunch")
        client.announceTyping(in: try ChannelName("general"))
        #expect(client.flushEphemeral(timeout: 10))
        let found = try client.presence(of: [client.user])
        #expect(found[client.user]?.state == .away && found[client.user]?.reason == "lunch", "\(found)")
        // Neither is a message, and neither waits in the outbox.
        #expect(try client.messages(in: try ChannelName("general")).messages.count == before)
        #expect(try client.engine.outboxEntries().isEmpty)
        // The engine hands both over as events.
        events = []
        let deadline = Date() + 120
        while Date() < deadline, !(events.contains { if case .typing = $0 { true } else { false } }) {
            events += client.drainEvents()
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(events.contains { if case .typing(let n) = $0 { n.channelName == "general" && n.user == client.user } else { false } })
        #expect(events.contains { if case .presence(let p) = $0 { p.state == .away } else { false } })
    }

    /// A client that shows no presence follows none: presence comes as no event (typing still does),
    /// yet `allPresence` reads what is there; followed again, a later change comes as an event. (One
    /// client reads its own writes: two clients of one OS user here have keys of their own, and would
    /// not vouch for each other's.)
    @Test func presenceNotFollowedComesAsNoEventButIsReadWhenAskedFor() async throws {
        let sandbox = try ChatSandbox()
        let ada = try sandbox.client("ada", handle: "ada")
        defer { ada.stop() }
        let general = try ChannelName("general")
        try ada.join(general)
        var events: [ChatEvent] = []
        func drain(until done: ([ChatEvent]) -> Bool) async throws {
            let deadline = Date() + 60
            while Date() < deadline, !done(events) {
                events += ada.drainEvents()
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        // The engine's first fetch fixes where its feed starts.
        try await drain { $0.contains { if case .status = $0 { true } else { false } } }
        ada.followPresence(false)
        ada.publishPresence(.away, reason: "lunch")
        #expect(ada.flushEphemeral(timeout: 10))
        ada.announceTyping(in: general)
        #expect(ada.flushEphemeral(timeout: 10))
        func presence(_ event: ChatEvent) -> Presence? { if case .presence(let p) = event { p } else { nil } }
        events = []
        try await drain { $0.contains { if case .typing = $0 { true } else { false } } }
        #expect(events.contains { if case .typing = $0 { true } else { false } }, "typing is still followed")
        #expect(!events.contains { presence($0) != nil }, "the presence, written before the typing notice, came as an event")
        let all = try ada.allPresence()
        #expect(all[ada.user]?.state == .away && all[ada.user]?.reason == "lunch", "\(all)")

        ada.followPresence(true)
        ada.publishPresence(.online)
        #expect(ada.flushEphemeral(timeout: 10))
        events = []
        try await drain { $0.contains { presence($0)?.state == .online } }
        #expect(events.contains { presence($0)?.state == .online })
    }

    /// A heartbeat that changes nothing is a quiet commit: it wakes no other client while bells keep
    /// ringing, and is read when they stop. A change of state among the heartbeats still comes at once.
    @Test func heartbeatsWakeNoOneButAChangeOfStateDoes() async throws {
        let sandbox = try ChatSandbox()
        let ada = try sandbox.client("ada", handle: "ada")
        // Bob's timer looks every 30 s: within this test only bells, and the trust in them lapsing, make him look.
        let bob = try sandbox.client("bob", handle: "bob", pollInterval: 30)
        defer { ada.stop(); bob.stop() }
        // Both run as this test's OS user, each with a key of its own, so Bob's chat would not vouch for
        // Ada's records: his engine's events are read instead.
        var seen: [Presence] = []
        let adas = Presence.recordID(for: ada.userRecordID)
        func collect() {
            while let event = bob.engine.nextEvent() {
                guard case .recordsChanged(let records) = event else { continue }
                seen += records.filter { $0.recordID == adas }.compactMap(Presence.init)
            }
        }
        func waitFor(_ what: String, _ found: () -> Bool) async throws {
            let deadline = Date() + 30
            while !found(), Date() < deadline {
                try await Task.sleep(for: .milliseconds(20))
                collect()
            }
            try #require(found(), "\(what): Bob saw \(seen.map { "\($0.state) at \($0.seen.timeIntervalSince1970)" })")
        }
        // Bob's engine has fixed where its feed starts once it reports a status.
        var started = false
        let ready = Date() + 120
        while !started, Date() < ready {
            while let event = bob.engine.nextEvent() { if case .status = event { started = true } }
            try await Task.sleep(for: .milliseconds(20))
        }
        ada.publishPresence(.online)
        try await waitFor("the first presence") { !seen.isEmpty }

        // Sixteen heartbeats half a second apart, each keeping Bob's trust in bells; the ninth says away.
        seen = []
        let looksBefore = bob.engine.looksWithoutBell
        var last = Date()
        for beat in 0..<16 {
            try await Task.sleep(for: .milliseconds(500))
            last = Date()
            if beat < 8 { ada.publishPresence(.online, at: last) } else { ada.publishPresence(.away, reason: "lunch", at: last) }
            collect()
        }
        let duringBeats = seen
        let looks = bob.engine.looksWithoutBell - looksBefore
        #expect(duringBeats.contains { $0.state == .away }, "the change to away did not come while the heartbeats went on")
        // Rung loudly, each of the 16 would have woken him. Quiet, a heartbeat reaches him only when he looks
        // without a bell: when his trust in bells lapses, which a machine that holds Ada's writes up makes
        // happen more often. So each delivery but the change to away, which rings, needs a look of its own
        // (and one look may have begun before the count was taken).
        #expect(duringBeats.count <= looks + 2, "\(duringBeats.count) presences delivered during 16 heartbeats, \(looks) looks without a bell")
        // Once they stop, his trust lapses and he looks: the last heartbeat arrives.
        try await waitFor("the last heartbeat") { seen.contains { abs($0.seen.timeIntervalSince(last)) < 0.01 && $0.state == .away } }
    }

    /// Writes `state` as `client`'s presence at `time`, and returns its record as stored.
    private func published(by client: ChatClient, _ state: PresenceState = .online, reason: String = "", at time: Date) throws -> Record {
        client.publishPresence(state, reason: reason, at: time)
        try #require(client.flushEphemeral(timeout: 10))
        return try client.container.publicDatabase.record(for: Presence.recordID(for: client.userRecordID))
    }

    /// What `client` reads of `record`, and how many signatures that took it to check.
    private func read(_ record: Record, by client: ChatClient) throws -> (Presence?, checked: Int) {
        let keys = try #require(client.container.accountKeys)
        let before = keys.signaturesVerified
        let found = client.presence(from: record)
        return (found, keys.signaturesVerified - before)
    }

    /// Heartbeats after the first are vouched for by their hash chain: no signature is checked until the
    /// state changes, and the time vouched for moves on with them.
    @Test func aHeartbeatIsVouchedForByItsChainWithoutASignatureCheck() throws {
        let sandbox = try ChatSandbox()
        let ada = try sandbox.client("ada", handle: "ada")
        defer { ada.stop() }
        let now = Date()
        func publishAndRead(_ state: PresenceState, reason: String = "", at time: Date) throws -> (Presence?, checked: Int) {
            try read(try published(by: ada, state, reason: reason, at: time), by: ada)
        }
        let first = try publishAndRead(.online, at: now)
        #expect(first.0?.state == .online && first.checked == 1, "the new chain's statement is checked once: \(first)")
        for minute in 1...3 {
            let beat = try publishAndRead(.online, at: now + Double(minute) * 60)
            #expect(beat.checked == 0, "heartbeat \(minute) checked \(beat.checked) signatures")
            let seen = try #require(beat.0?.seen)
            #expect(abs(seen.timeIntervalSince(now + Double(minute) * 60)) < 0.01, "heartbeat \(minute) vouched for \(seen)")
        }
        let dayLater = try publishAndRead(.online, at: now + 86_400 + 60)
        #expect(dayLater.0?.state == .online && dayLater.checked == 1, "a chain runs out after a day, and a new one is signed: \(dayLater)")
        let away = try publishAndRead(.away, reason: "lunch", at: now + 86_400 + 200)
        #expect(away.0?.state == .away && away.0?.reason == "lunch" && away.checked == 1, "a change of state is a new chain, signed: \(away)")
    }

    /// A heartbeat's text is matched byte for byte, as its chain's statement was signed: a row that copies
    /// the proof with the same characters spelled another way (é decomposed) is not the signed heartbeat.
    @Test func aHeartbeatSpelledAnotherWayIsNotTheSignedOne() throws {
        let sandbox = try ChatSandbox()
        let ada = try sandbox.client("ada", handle: "ada")
        defer { ada.stop() }
        let now = Date()
        let opening = try published(by: ada, .away, reason: "caf\u{E9}", at: now)
        #expect(ada.presence(from: opening)?.reason == "caf\u{E9}")
        let beat = try published(by: ada, .away, reason: "caf\u{E9}", at: now + 60)
        var respelled = beat
        respelled["reason"] = .string("cafe\u{301}")
        #expect("cafe\u{301}" == "caf\u{E9}", "Swift's == takes the two spellings for one string")
        #expect(ada.presence(from: respelled) == nil)
        #expect(ada.presence(from: beat)?.seen.timeIntervalSince(now + 60) ?? 1 < 0.01, "the owner's heartbeat still is")
    }

    /// Rows written into the shared file from a heartbeat someone else wrote: none makes its owner
    /// look present later, or in another state, and none spoils the chain for the owner's next heartbeat.
    @Test func aForgedHeartbeatVouchesForNothingLaterThanItsOwnerWrote() throws {
        let sandbox = try ChatSandbox()
        let ada = try sandbox.client("ada", handle: "ada")
        defer { ada.stop() }
        let now = Date()
        let opening = try published(by: ada, at: now)
        #expect(ada.presence(from: opening)?.state == .online)
        let beat = try published(by: ada, at: now + 60)
        #expect(ada.presence(from: beat)?.seen.timeIntervalSince(now + 60) ?? 1 < 0.01)

        var later = beat
        later["seen"] = .date(now + 3_600)
        let vouched = try #require(ada.presence(from: later), "the proof still holds for the time it was given")
        #expect(abs(vouched.seen.timeIntervalSince(now + 60)) < 0.01, "a later `seen` beside an old link is not believed: \(vouched.seen)")

        var stepped = beat
        stepped["chainStep"] = .int64((beat["chainStep"]?.int64Value ?? 0) + 30)
        stepped["seen"] = .date(now + 360)
        #expect(ada.presence(from: stepped) == nil, "a later step with a link given out before")

        var elsewhere = beat
        elsewhere["state"] = .string("away")
        #expect(ada.presence(from: elsewhere) == nil, "another state under the chain's signed statement")

        #expect(ada.presence(from: opening) == nil, "a heartbeat older than one accepted, written back")

        var bare = beat
        for field in ["chainSignature", "chainTip", "chainSince", "chainStep", "chainLink"] { bare[field] = nil }
        bare["seen"] = .date(now + 3_600)
        #expect(ada.presence(from: bare) == nil, "without its proof the record's own signature no longer matches")

        let next = try published(by: ada, at: now + 120)
        #expect(ada.presence(from: next)?.seen.timeIntervalSince(now + 120) ?? 1 < 0.01, "the owner's next heartbeat is still vouched for")
    }

    /// A heartbeat too many steps past the last link a reader accepted is checked by the record's own
    /// signature, not by walking the chain: a made-up link far on costs one signature check.
    @Test func aHeartbeatFarPastTheLastLinkAcceptedIsCheckedByItsSignature() throws {
        let sandbox = try ChatSandbox()
        let ada = try sandbox.client("ada", handle: "ada")
        defer { ada.stop() }
        let now = Date()
        #expect(try read(try published(by: ada, at: now), by: ada).checked == 1)
        let far = try published(by: ada, at: now + 1_000)
        let walked = PresenceChainReader.longestWalk
        #expect((far["chainStep"]?.int64Value ?? 0) > Int64(walked))
        let farRead = try read(far, by: ada)
        #expect(farRead.0 != nil && farRead.checked == 1, "100 steps on, the record's signature vouches: \(farRead)")
        #expect(abs((farRead.0?.seen ?? .distantPast).timeIntervalSince(now + 1_000)) < 0.01)

        var madeUp = far
        madeUp["chainStep"] = .int64(Int64(100 + walked + 50))
        madeUp["chainLink"] = .bytes(Data(repeating: 7, count: 32))
        madeUp["seen"] = .date(now + 3_000)
        let forged = try read(madeUp, by: ada)
        #expect(forged.0 == nil && forged.checked == 1, "a made-up link far on fails the record's signature: \(forged)")
        let next = try read(try published(by: ada, at: now + 1_060), by: ada)
        #expect(next.0 != nil && next.checked == 0, "the owner's next heartbeat is walked to from the one accepted: \(next)")
    }

    @Test func aRecordNamedForAnotherAccountIsNotTheirPresence() {
        var record = Record(recordType: "Presence", recordID: RecordID(recordName: "presence._1002_bob"),
                            fields: ["state": .string("online"), "seen": .date(start)], changeTag: nil)
        record.creatorUserRecordID = RecordID(recordName: "_1001_eve")
        #expect(Presence(record) == nil)
        record.creatorUserRecordID = RecordID(recordName: "_1002_bob")
        #expect(Presence(record)?.state == .online)
        var typing = Record(recordType: "Typing", recordID: RecordID(recordName: "typing._1002_bob"),
                            fields: ["channel": .string("../etc"), "at": .date(start)], changeTag: nil)
        typing.creatorUserRecordID = RecordID(recordName: "_1002_bob")
        #expect(TypingNotice(typing) == nil, "a channel name that is not one is refused")
    }

    @Test func theGrammarAndTheBotTakeTheNewCommands() throws {
        #expect(try CommandGrammar.parse("/away out to lunch") == .away(reason: "out to lunch"))
        #expect(try CommandGrammar.parse("/away") == .away(reason: nil))
        #expect(try CommandGrammar.parse("/back") == .back)
        #expect(try CommandGrammar.parse("/open") == .open(index: 1))
        #expect(try CommandGrammar.parse("/open 3") == .open(index: 3))
        #expect(throws: CommandError.self) { try CommandGrammar.parse("/open -1") }
        #expect(try BotInput.json(Array(#"{"cmd":"typing","channel":"ops"}"#.utf8)) == .typing(channel: "ops"))
        #expect(try BotInput.json(Array(#"{"cmd":"away","reason":"lunch"}"#.utf8)) == .away(reason: "lunch"))
        #expect(try BotInput.json(Array(#"{"cmd":"open","n":"2"}"#.utf8)) == .open(index: 2))
        #expect(throws: CommandError.self) { try BotInput.json(Array(#"{"cmd":"open","n":"x"}"#.utf8)) }
    }
}
