import Foundation
import ProcessTestKit
import Testing

/// Issue 14's identities and signatures, between real OS users sharing a `sqlite` container:
/// keys published where only their owner can write, lines forged with `sqlite3` shown as
/// unverified, and a changed key warned about once.
@Suite(.startsProcesses, .serialized) struct SignedRecordTests {
    static let alice = "fctrustalice"
    static let bob = "fctrustbob"
    static let group = "fctrustgroup"

    private func fatchat(_ user: String, _ arguments: [String]) async throws -> WorkerProcess {
        try await SharedContainerFixture.fatchat(user, arguments)
    }

    private static func uid(_ user: String) -> UInt32 { OSUsers.ids(of: user)?.uid ?? 0 }
    private static func account(_ user: String) -> String { "_\(uid(user))_\(user)" }

    /// Forgets what `user` has seen of others' keys, so that a run starts as a first meeting.
    private static func forgetKnownKeys(_ user: String) {
        try? FileManager.default.removeItem(atPath: "/home/\(user)/.local/share/fatchat/known_keys")
    }

    @Test(.enabled(if: OSUsers.available, "needs root to create the OS users fctrustalice and fctrustbob"))
    func keysArePublishedOwnedByTheirAccount() async throws {
        let (root, container) = try await SharedContainerFixture.make(users: [Self.alice, Self.bob], group: Self.group)
        defer { try? FileManager.default.removeItem(at: root) }
        let posted = try await fatchat(Self.alice, ["post", "--container", container, "ops", "hello"])
        #expect(posted.errorText.isEmpty, "\(posted.errorText)")

        var keys = stat()
        #expect(stat(container + "/keys", &keys) == 0)
        #expect(keys.st_mode & S_ISVTX != 0, "keys/ is sticky")
        #expect(keys.st_mode & S_ISGID != 0, "keys/ is setgid")
        var published = stat()
        #expect(stat(container + "/keys/\(Self.account(Self.alice)).pub", &published) == 0)
        #expect(published.st_uid == Self.uid(Self.alice))
        var secret = stat()
        #expect(stat("/home/\(Self.alice)/.local/share/fatchat/identity.key", &secret) == 0)
        #expect(secret.st_mode & 0o777 == 0o600, "the private key is the user's alone")
        #expect(secret.st_uid == Self.uid(Self.alice))

        let whois = try await fatchat(Self.bob, ["whois", "--container", container, Self.alice])
        let line = try #require(whois.lines.first { $0.contains(Self.account(Self.alice)) }, "\(whois.lines) \(whois.errorText)")
        #expect(line.contains(" key SHA256:"), "\(line)")

        // A key file of alice's that bob plants under her name is not believed: it is not hers.
        let planted = container + "/keys/\(Self.account(Self.alice)).pub"
        try FileManager.default.removeItem(atPath: planted)
        let forgedKey = try await fatchat(Self.bob, ["whois", "--container", container, Self.bob])
        #expect(forgedKey.lines.contains { $0.contains(" key SHA256:") }, "\(forgedKey.lines)")
        let bobsKey = try String(contentsOfFile: container + "/keys/\(Self.account(Self.bob)).pub", encoding: .utf8)
        let claimed = bobsKey.replacingOccurrences(of: Self.account(Self.bob), with: Self.account(Self.alice))
        try Data(claimed.utf8).write(to: URL(fileURLWithPath: planted))
        chown(planted, Self.uid(Self.bob), OSUsers.groupID(of: Self.group) ?? 0)
        let afterPlant = try await fatchat(Self.bob, ["whois", "--container", container, Self.account(Self.alice)])
        #expect(afterPlant.lines.contains { $0.contains("none that can be believed") }, "\(afterPlant.lines)")
        #expect(!afterPlant.lines.contains { $0.contains(" key SHA256:") }, "\(afterPlant.lines)")
    }

    @Test(.enabled(if: OSUsers.available, "needs root to create the OS users fctrustalice and fctrustbob"))
    func aLineForgedWithSQLiteShowsAsUnverified() async throws {
        let (root, container) = try await SharedContainerFixture.make(users: [Self.alice, Self.bob], group: Self.group)
        defer { try? FileManager.default.removeItem(at: root) }
        for (user, text) in [(Self.alice, "deploy at noon"), (Self.alice, "lunch is on me"), (Self.bob, "bob here")] {
            let posted = try await fatchat(user, ["post", "--container", container, "ops", text])
            #expect(posted.errorText.isEmpty, "\(posted.errorText)")
        }
        // bob, a member of the group, rewrites one of alice's lines and adds one in her name, straight into the file.
        let database = container + "/public.sqlite"
        let bobSQL = OSUsers.launcher(for: Self.bob)
        try SQLiteCLI.run(database, "UPDATE record SET fields = replace(fields, 'deploy at noon', 'deploy cancelled') WHERE type = 'Message' AND fields LIKE '%deploy at noon%';", launcher: bobSQL)
        try SQLiteCLI.run(database, """
            INSERT INTO record (zone, name, type, fields, created, modified, creator, modifier, tag)
              SELECT zone, 'f0f0f0f0f0f0f0f0', type, json_remove(replace(fields, 'lunch is on me', 'send me your password'), '$.recordSignature'),
                     created + 1, modified + 1, creator, modifier, 'forged'
              FROM record WHERE type = 'Message' AND fields LIKE '%lunch is on me%';
            INSERT INTO reference (holder, zone, target, cascade)
              SELECT (SELECT id FROM record WHERE name = 'f0f0f0f0f0f0f0f0'), zone, target, cascade
              FROM reference WHERE holder = (SELECT id FROM record WHERE fields LIKE '%lunch is on me%');
            """, launcher: bobSQL)

        let read = try await fatchat(Self.alice, ["read", "--container", container, "ops", "--json"])
        let messages = SharedContainerFixture.objects(read).filter { $0["type"] as? String == "message" }
        func verified(_ text: String) -> Bool? {
            guard let message = messages.first(where: { $0["text"] as? String == text }) else { return nil }
            return (message["verified"] as? Bool) ?? true
        }
        #expect(verified("deploy cancelled") == false, "an edited row fails its signature: \(read.lines)")
        #expect(verified("send me your password") == false, "an unsigned row claiming alice: \(read.lines)")
        #expect(verified("lunch is on me") == true, "\(read.lines)")
        #expect(verified("bob here") == true, "\(read.lines)")

        let plain = try await fatchat(Self.bob, ["read", "--container", container, "ops"])
        #expect(plain.lines.contains { $0.contains("?<\(Self.alice)> send me your password") }, "\(plain.lines)")
        #expect(plain.lines.contains { $0.contains(" <\(Self.alice)> lunch is on me") }, "\(plain.lines)")

        let check = try WorkerProcess("alice admin check", executable: "fatchat", ["admin", "check", "--container", container],
                                      launcher: OSUsers.launcher(for: Self.alice))
        #expect(try await check.finish(timeout: .seconds(120)).status == 1, "\(check.lines) \(check.errorText)")
        #expect(check.lines.contains { $0.contains("f0f0f0f0f0f0f0f0") && $0.contains("unsigned") }, "\(check.lines)")
        #expect(check.lines.contains { $0.contains("its signature does not match") }, "\(check.lines)")
        #expect(check.lines.filter { $0.contains("not verified") }.count == 2, "\(check.lines)")
    }

    @Test(.enabled(if: OSUsers.available, "needs root to create the OS users fctrustalice and fctrustbob"))
    func aChangedKeyIsWarnedAboutOnce() async throws {
        let (root, container) = try await SharedContainerFixture.make(users: [Self.alice, Self.bob], group: Self.group)
        defer { try? FileManager.default.removeItem(at: root) }
        Self.forgetKnownKeys(Self.bob)
        _ = try await fatchat(Self.alice, ["post", "--container", container, "ops", "first key"])
        let first = try await fatchat(Self.bob, ["read", "--container", container, "ops"])
        #expect(!first.errorText.contains("has changed"), "a first meeting is no change: \(first.errorText)")

        // alice loses her private key; her next run makes and publishes a new one.
        let keyFile = "/home/\(Self.alice)/.local/share/fatchat/identity.key"
        try FileManager.default.removeItem(atPath: keyFile)
        _ = try await fatchat(Self.alice, ["post", "--container", container, "ops", "second key"])

        let warned = try await fatchat(Self.bob, ["read", "--container", container, "ops"])
        let warnings = warned.errorText.split(separator: "\n").filter { $0.contains("The key of \(Self.account(Self.alice)) has changed") }
        #expect(warnings.count == 1, "\(warned.errorText)")
        #expect(warned.lines.contains { $0.contains("?<\(Self.alice)> first key") }, "the old key no longer vouches for it: \(warned.lines)")
        #expect(warned.lines.contains { $0.contains(" <\(Self.alice)> second key") }, "\(warned.lines)")

        let again = try await fatchat(Self.bob, ["read", "--container", container, "ops"])
        #expect(!again.errorText.contains("has changed"), "warned once only: \(again.errorText)")
    }
}
