import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore

extension MultiProcessTests {
    /// Permissions with real second and third OS users, made with `useradd` (the tests run as root).
    @Suite(.startsProcesses, .serialized)
    struct OSUserPermissionTests {
        static let owner = "fatchat-test-bob"
        static let other = "fatchat-test-carol"

        @Test("A user's private database is 0600 in a 0700 directory, and another user cannot open it")
        func privateDatabaseIsTheOwnersAlone() async throws {
            let bob = try OSUser.ensure(OSUserPermissionTests.owner), carol = try OSUser.ensure(OSUserPermissionTests.other)
            let directory = try TemporaryDirectory()
            let container = try directory.sharedDirectory("container")
            let bobData = try directory.homeFor(bob, "bob-data"), carolData = try directory.homeFor(carol, "carol-data")

            // Bob creates the container and his private database with umask 0: the modes must not depend on umask.
            try await Fixture.run(["save", "--container", container, "--mode", "local", "--database", "private",
                                   "--count", "3", "--prefix", "secret"], launcher: bob.launcher(dataHome: bobData))
            let info = try await Fixture.run(["info", "--container", container, "--mode", "local"], launcher: bob.launcher(dataHome: bobData))
            let identifier = try JSONDecoder().decode([String: String].self, from: Data((info.last ?? "").utf8))["identifier"] ?? ""
            let privateDirectory = URL(fileURLWithPath: bobData).appendingPathComponent("fatchat/\(identifier)")
            let privateFile = privateDirectory.appendingPathComponent("private.sqlite")

            let fileInfo = try FileStatus(privateFile.path), directoryInfo = try FileStatus(privateDirectory.path)
            #expect(fileInfo.permissions == 0o600)
            #expect(fileInfo.owner == bob.uid)
            #expect(directoryInfo.permissions == 0o700)
            #expect(directoryInfo.owner == bob.uid)

            // Bob can read it, and his three records are in it.
            let bobProbe = try await OSUser.probe(privateFile.path, as: bob, dataHome: bobData)
            #expect(bobProbe == "ok")
            let mine = try await Fixture.run(["check", "--container", container, "--mode", "local", "--database", "private"],
                                             launcher: bob.launcher(dataHome: bobData))
            #expect(mine.last?.contains("\"present\":[\"secret-0\",\"secret-1\",\"secret-2\"]") == true, "bob's private records: \(mine)")

            // Carol cannot open the file at all...
            let carolProbe = try await OSUser.probe(privateFile.path, as: carol, dataHome: carolData)
            #expect(carolProbe == "EACCES")
            // ...nor reach it through the store by pointing at Bob's data directory.
            let sneaking = try WorkerProcess("carol opens bob's private database", [
                "check", "--container", container, "--mode", "local", "--database", "private",
                "--private-dir", URL(fileURLWithPath: bobData).appendingPathComponent("fatchat").path,
            ], launcher: carol.launcher(dataHome: carolData))
            defer { sneaking.killIfRunning() }
            let end = try await sneaking.finish(timeout: .seconds(60))
            #expect(end == WorkerProcess.Termination(status: 77, signaled: false), "\(end): \(sneaking.errorText)")
            #expect(sneaking.errorText.contains("permissionFailure"))
            #expect(!sneaking.lines.contains { $0.contains("secret") })
        }

        @Test("In the public database only a record's creator may modify or delete it")
        func publicRecordsBelongToTheirCreator() async throws {
            let bob = try OSUser.ensure(OSUserPermissionTests.owner), carol = try OSUser.ensure(OSUserPermissionTests.other)
            let directory = try TemporaryDirectory()
            let container = try directory.sharedDirectory("container")
            let bobData = try directory.homeFor(bob, "bob-data"), carolData = try directory.homeFor(carol, "carol-data")
            let common = ["--container", container, "--mode", "local"]

            try await Fixture.run(["save"] + common + ["--count", "2", "--prefix", "bob"], launcher: bob.launcher(dataHome: bobData))
            // Carol can write the file: her own records save and change fine.
            try await Fixture.run(["save"] + common + ["--count", "1", "--prefix", "carol"], launcher: carol.launcher(dataHome: carolData))
            try await Fixture.run(["modify"] + common + ["--name", "carol-0", "--value", "carol's own"], launcher: carol.launcher(dataHome: carolData))

            for arguments in [["modify"] + common + ["--name", "bob-0", "--value", "carol was here"],
                              ["delete"] + common + ["--name", "bob-1"]] {
                let attempt = try WorkerProcess("carol: \(arguments[0]) bob's record", arguments, launcher: carol.launcher(dataHome: carolData))
                defer { attempt.killIfRunning() }
                let end = try await attempt.finish(timeout: .seconds(60))
                #expect(end == WorkerProcess.Termination(status: 77, signaled: false), "\(attempt.name): \(end): \(attempt.errorText)")
                #expect(attempt.errorText.contains("permissionFailure"), "\(attempt.name): \(attempt.errorText)")
            }
            // Bob still can.
            try await Fixture.run(["modify"] + common + ["--name", "bob-0", "--value", "bob's edit"], launcher: bob.launcher(dataHome: bobData))

            let report = try await Fixture.run(["check"] + common, launcher: bob.launcher(dataHome: bobData))
            #expect(report.last?.contains("\"present\":[\"bob-0\",\"bob-1\",\"carol-0\"]") == true, "after carol's attempts: \(report)")
            #expect(report.last?.contains("\"createdEntries\":3") == true)
        }
    }

}

/// A real OS account that tests run workers as.
struct OSUser: Sendable {
    var name: String
    var uid: uid_t
    var gid: gid_t

    /// Creates the account unless it exists; safe when another test creates it at the same time.
    static func ensure(_ name: String) throws -> OSUser {
        if let user = lookup(name) { return user }
        let process = try SpawnedProcess(["/usr/sbin/useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", name],
                                         stdout: .descriptor(STDOUT_FILENO), stderr: .descriptor(STDERR_FILENO))
        process.waitUntilExit()
        guard let user = lookup(name) else {
            throw WorkerProcess.Failure(description: "useradd \(name) failed (exit \(process.terminationStatus)); the tests must run as root.")
        }
        return user
    }

    private static func lookup(_ name: String) -> OSUser? {
        guard let ids = OSUsers.ids(of: name) else { return nil }
        return OSUser(name: name, uid: ids.uid, gid: ids.gid)
    }

    /// `runuser` to this user, with `XDG_DATA_HOME` set and umask 0, then the worker.
    func launcher(dataHome: String) -> [String] {
        ["/usr/sbin/runuser", "-u", name, "--", "/usr/bin/env", "XDG_DATA_HOME=\(dataHome)",
         "/bin/sh", "-c", "umask 0; exec \"$0\" \"$@\""]
    }

    /// Runs `store-worker probe-read` on `path` as `user`; returns what it printed (`ok`, `EACCES`, …).
    static func probe(_ path: String, as user: OSUser, dataHome: String) async throws -> String {
        let worker = try WorkerProcess("probe-read as \(user.name)", ["probe-read", path], launcher: user.launcher(dataHome: dataHome))
        defer { worker.killIfRunning() }
        try await worker.finish(timeout: .seconds(30))
        return worker.lines.last ?? "nothing printed: \(worker.errorText)"
    }
}

/// The parts of `stat(2)` a permissions test looks at.
struct FileStatus {
    var permissions: mode_t
    var owner: uid_t

    init(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw WorkerProcess.Failure(description: "stat \(path): \(String(cString: strerror(errno)))")
        }
        permissions = info.st_mode & 0o7777
        owner = info.st_uid
    }
}

extension TemporaryDirectory {
    /// A directory everyone may write, for a container several users share.
    func sharedDirectory(_ name: String) throws -> String {
        let url = path(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        chmod(url.path, 0o777)
        chmod(self.url.path, 0o755)
        return url.path
    }

    /// A data directory owned by `user`, to be its `XDG_DATA_HOME`.
    func homeFor(_ user: OSUser, _ name: String) throws -> String {
        let url = path(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        guard chown(url.path, user.uid, user.gid) == 0 else {
            throw WorkerProcess.Failure(description: "chown \(url.path) to \(user.name): \(String(cString: strerror(errno)))")
        }
        chmod(self.url.path, 0o755)
        return url.path
    }
}
