import Foundation
import Synchronization
import Testing
@testable import RecordStore

@Suite struct AccountKeysTests {
    static let ghost = "_4242_ghost"

    /// Publishes a new key for `ghost` in the container's key folder, as that account's own file; rewritten in place when
    /// `inPlace`, so only its times and contents tell it changed.
    static func publishGhostKey(in container: URL, inPlace: Bool = false, account: String = ghost, uid: uid_t = 4242) throws -> PublicIdentity {
        let own = container.deletingLastPathComponent().appendingPathComponent("ghost-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: false)
        let identity = try IdentityKeys.loadOrCreate(in: own, account: account, naming: ContainerNaming()).publicIdentity
        let file = container.appendingPathComponent("keys/\(account).pub").path
        if inPlace, let handle = FileHandle(forWritingAtPath: file) {
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: Data(identity.encoded.utf8))
            try handle.close()
        } else {
            #expect(FileManager.default.createFile(atPath: file, contents: Data(identity.encoded.utf8)))
        }
        #expect(chown(file, uid, getegid()) == 0)
        return identity
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give the key file to another uid"))
    func aKeyIsLookedAtAgainAfterFreshnessAndReadAgainOnlyIfItsFileChanged() throws {
        let dir = try TemporaryDirectory()
        let container = try dir.container()
        let keys = try #require(container.accountKeys)
        let first = try Self.publishGhostKey(in: dir.path("container"))
        #expect(keys.key(of: Self.ghost)?.fingerprint == first.fingerprint)
        let reads = keys.directory.keyReads

        Thread.sleep(forTimeInterval: AccountKeys.freshness + 0.5)
        #expect(keys.key(of: Self.ghost)?.fingerprint == first.fingerprint)
        #expect(keys.directory.keyReads == reads, "a key file a look shows unchanged is not read again")

        let second = try Self.publishGhostKey(in: dir.path("container"), inPlace: true)
        #expect(keys.key(of: Self.ghost)?.fingerprint == first.fingerprint, "within the freshness, the key is not looked at")
        Thread.sleep(forTimeInterval: AccountKeys.freshness + 0.5)
        #expect(keys.key(of: Self.ghost)?.fingerprint == second.fingerprint, "a file rewritten in place is read again")
        #expect(keys.directory.keyReads == reads + 1)
    }

    /// Each key seen for the first time adds a line to `known_keys`, which stays the same file; a changed key is
    /// reported, and rewrites the file with each account once.
    @Test(.enabled(if: geteuid() == 0, "needs root to give the key files to other uids"))
    func aKeySeenForTheFirstTimeIsALineAddedAndAChangedOneRewritesTheFile() throws {
        let dir = try TemporaryDirectory()
        let known = dir.path("private-data").appendingPathComponent(AccountKeys.knownKeysName).path
        func lines() -> [Substring] { ((try? String(contentsOfFile: known, encoding: .utf8)) ?? "").split(separator: "\n") }
        func inode() -> ino_t { var info = stat(); return lstat(known, &info) == 0 ? info.st_ino : 0 }
        let other = "_4243_other"
        let opened = try dir.container()
        let ghostKey = try Self.publishGhostKey(in: dir.path("container"))
        let otherKey = try Self.publishGhostKey(in: dir.path("container"), account: other, uid: 4243)
        do {
            let keys = try #require(opened.accountKeys)
            #expect(keys.key(of: Self.ghost)?.fingerprint == ghostKey.fingerprint)
            let first = inode()
            #expect(first != 0 && lines().contains { $0 == "\(Self.ghost) \(ghostKey.fingerprint)" }, "\(lines())")
            #expect(keys.key(of: other)?.fingerprint == otherKey.fingerprint)
            #expect(inode() == first, "a second new key is appended, not written through a new file")
            #expect(lines().contains { $0 == "\(other) \(otherKey.fingerprint)" }, "\(lines())")
        }
        let changed = try Self.publishGhostKey(in: dir.path("container"), inPlace: true)
        let beforeChange = inode()
        let warnings = WarningBox()
        let keys = try #require(try dir.container().accountKeys)
        keys.report { warnings.add($0) }
        #expect(keys.key(of: Self.ghost)?.fingerprint == changed.fingerprint)
        #expect(warnings.all.contains { $0.contains("has changed") }, "\(warnings.all)")
        #expect(inode() != beforeChange, "a changed key rewrites the file")
        #expect(lines().filter { $0.hasPrefix(Self.ghost + " ") } == ["\(Self.ghost) \(changed.fingerprint)"], "\(lines())")
        #expect(lines().filter { $0.hasPrefix(other + " ") }.count == 1, "\(lines())")
    }
}

/// Warnings handed to a handler, which may be called from any thread.
private final class WarningBox: Sendable {
    private let warnings = Mutex<[String]>([])
    func add(_ warning: String) { warnings.withLock { $0.append(warning) } }
    var all: [String] { warnings.withLock { $0 } }
}
