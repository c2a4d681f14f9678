import Foundation
import ProcessTestKit
import Testing
@testable import FatchatCore

/// A handle never passes for another person: where it is not its account's own name, or
/// another account goes by it, the account shows beside it.
@Suite(.startsProcesses, .serialized) struct HandleImpersonationTests {
    static let alice = "fcoutalice"
    static let bob = "fcoutbob"
    static let group = "fcoutgroup"

    // MARK: The rule

    @Test func aHandleThatIsItsAccountsNameStandsAlone() {
        var accounts = AccountDirectory()
        accounts.learn(user: "_1001_alice", handle: "alice")
        accounts.learn(user: "_1002_bob", handle: "bob")
        #expect(accounts.label(handle: "alice", user: "_1001_alice") == "alice")
        #expect(accounts.label(handle: "bob", user: "_1002_bob") == "bob")
    }

    @Test func anotherAccountsNameShowsTheAccount() {
        var accounts = AccountDirectory()
        accounts.learn(user: "_1001_alice", handle: "alice")
        accounts.learn(user: "_1002_bob", handle: "alice")
        #expect(accounts.label(handle: "alice", user: "_1002_bob") == "alice (bob)")
        // Once someone else goes by alice, alice's own lines show her account too.
        #expect(accounts.label(handle: "alice", user: "_1001_alice") == "alice (alice)")
        // Case does not hide a copy.
        #expect(accounts.label(handle: "ALICE", user: "_1002_bob") == "ALICE (bob)")
    }

    @Test func aHandleThatIsNotItsAccountsNameShowsTheAccountEvenUnseen() {
        let accounts = AccountDirectory()
        #expect(accounts.label(handle: "ada", user: "_1001_alice") == "ada (alice)")
        // Invisible and reordering characters are dropped before comparing, so they hide nothing.
        #expect(accounts.label(handle: "bob\u{200B}", user: "_1001_alice") == "bob (alice)")
        #expect(accounts.label(handle: "\u{202E}ecila", user: "_1002_bob") == "ecila (bob)")
        #expect(accounts.label(handle: "alice", user: "") == "alice (?)")
        #expect(accounts.label(handle: "x", user: "not-a-user-name") == "x (not-a-user-name)")
    }

    @Test func nothingInsideAHandleCanLookLikeTheAccountPart() {
        let accounts = AccountDirectory()
        #expect(accounts.label(handle: "alice (alice)", user: "_1002_bob") == "alice__alice_ (bob)")
        #expect(accounts.label(handle: "a> hi <alice", user: "_1002_bob") == "a__hi__alice (bob)")
        #expect(accounts.label(handle: "eve\u{1B}[31m", user: "_1002_bob") == "eve^[[31m (bob)")
        let long = accounts.label(handle: String(repeating: "x", count: 1_000_000), user: "_1002_bob")
        #expect(long == String(repeating: "x", count: AccountDirectory.handleCharacters) + "… (bob)")
    }

    @Test func theByteByByteReadingsOfPlainNamesAgreeWithTheGeneralOnes() {
        let x = { (count: Int) in String(repeating: "x", count: count) }
        var names = ["", "a", "_", "__", x(31), x(32), x(33), "_1001_alice", "_1001_", "__alice", "_12a_bob",
                     "_1001_bob_smith", "_1234567890_" + x(32), "_12345678901_" + x(32), "_1001_" + x(33),
                     "_1001_al ice", "_1001_al(ice", "_1001_a>b", "_1001_alé", "_1001_al\u{7F}", "_1001\u{301}_bob", "_1001_\u{301}bob"]
        // Mostly the bytes the fast readings look at, and a few that must send a name the general way.
        let alphabet: [Character] = ["_", "_", "_", "1", "9", "0", "a", "Z", "~", "!", "(", ")", "<", ">", " ", "\t",
                                     "\u{7F}", "é", "\u{301}", "\u{1B}", "\r\n", "\u{200B}"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            let length = Int.random(in: 0...48, using: &generator)
            let body = String((0..<length).map { _ in alphabet.randomElement(using: &generator) ?? "_" })
            names.append(Bool.random(using: &generator) ? "_\(Int.random(in: 0...99_999, using: &generator))_" + body : body)
        }
        for name in names {
            #expect(AccountDirectory.shown(name) == AccountDirectory.generalShown(name), "\(name.debugDescription)")
            #expect(AccountDirectory.accountName(of: name) == AccountDirectory.generalAccountName(of: name), "\(name.debugDescription)")
        }
    }

    @Test func twoAccountsOfOneNameAreToldApartByTheirIDs() {
        var accounts = AccountDirectory()
        accounts.learn(user: "_1002_bob", handle: "bob")
        accounts.learn(user: "_2002_bob", handle: "bob")
        #expect(accounts.label(handle: "bob", user: "_2002_bob") == "bob (_2002_bob)")
        #expect(accounts.label(handle: "bob", user: "_1002_bob") == "bob (_1002_bob)")
    }

    @Test func plainLinesLabelTheSenderAndColourByTheAccount() throws {
        let forged = try #require(plantedMessage(text: "send me the keys", handle: "alice", user: "_1002_bob"))
        let real = try #require(plantedMessage(text: "morning", handle: "alice", user: "_1001_alice"))
        var formatter = EventFormatter(json: false)
        formatter.learn(forged)
        formatter.learn(real)
        #expect(formatter.message(forged).hasSuffix("#general <alice (bob)> send me the keys"))
        #expect(formatter.message(real).hasSuffix("#general <alice (alice)> morning"))

        var coloured = EventFormatter(json: false, color: true)
        coloured.learn(forged)
        let line = coloured.message(forged)
        #expect(line.contains("\u{1B}[\(HandleColor.ansi(for: "_1002_bob"))malice (bob)\u{1B}[0m"), "the colour is bob's, not alice's")

        let json = EventFormatter(json: true).message(forged)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["from"] as? String == "alice")
        #expect(object["user"] as? String == "_1002_bob")
    }

    // MARK: Two real OS users

    private func fatchat(_ user: String, _ arguments: [String]) async throws -> WorkerProcess {
        let process = try WorkerProcess("\(user) \(arguments.first ?? "")", executable: "fatchat", arguments,
                                        launcher: OSUsers.launcher(for: user), environment: ["NO_COLOR": "1"])
        _ = try await process.finish(timeout: .seconds(120))
        return process
    }

    @Test(.enabled(if: OSUsers.available, "needs root to create the OS users fcoutalice and fcoutbob"))
    func bobPostingAsAliceReadsAsBobInAlicesReadAndBot() async throws {
        try OSUsers.ensure(users: [Self.alice, Self.bob], group: Self.group)
        let root = URL(fileURLWithPath: "/tmp/fatchat-handles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(at: root) }
        let container = root.appendingPathComponent("chat").path
        let made = try WorkerProcess("init", executable: "fatchat", ["init", container, "--group", Self.group])
        #expect(try await made.finish(timeout: .seconds(60)) == .success, "\(made.errorText)")

        _ = try await fatchat(Self.alice, ["post", "--container", container, "general", "hi from the real alice"])
        let input = Pipe()
        let bot = try WorkerProcess("alice bot", executable: "fatchat", ["bot", "--container", container, "--join", "general"],
                                    launcher: OSUsers.launcher(for: Self.alice), environment: ["NO_COLOR": "1"],
                                    input: input.fileHandleForReading)
        defer { bot.killIfRunning() }
        #expect(await bot.waitForLines(1, timeout: .seconds(30)), "alice's bot joined: \(bot.errorText)")

        let forged = try await fatchat(Self.bob, ["post", "--container", container, "--handle", Self.alice, "general", "send me your password"])
        #expect(forged.errorText.isEmpty, "\(forged.errorText)")

        let read = try await fatchat(Self.alice, ["read", "--container", container, "general"])
        let forgedLine = read.lines.first { $0.hasSuffix("send me your password") }
        #expect(forgedLine?.contains("<\(Self.alice) (\(Self.bob))>") == true, "\(read.lines)")
        let realLine = read.lines.first { $0.hasSuffix("hi from the real alice") }
        #expect(realLine?.contains("<\(Self.alice) (\(Self.alice))>") == true, "\(read.lines)")
        #expect(!read.lines.contains { $0.contains("<\(Self.alice)>") }, "no line reads as plain alice: \(read.lines)")

        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, !bot.lines.contains(where: { $0.hasSuffix("send me your password") }) {
            try await Task.sleep(for: .milliseconds(50))
        }
        let botLine = bot.lines.first { $0.hasSuffix("send me your password") }
        #expect(botLine?.contains("<\(Self.alice) (\(Self.bob))>") == true, "\(bot.lines)")
        try input.fileHandleForWriting.close()
        _ = try await bot.finish(timeout: .seconds(60))
    }
}
