import Foundation
import Testing
@testable import RecordStore

@Suite struct AccountKeysTests {
    static let ghost = "_4242_ghost"

    /// Publishes a new key for `ghost` in the container's key folder, as that account's own file; rewritten in place when
    /// `inPlace`, so only its times and contents tell it changed.
    static func publishGhostKey(in container: URL, inPlace: Bool = false) throws -> PublicIdentity {
        let own = container.deletingLastPathComponent().appendingPathComponent("ghost-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: false)
        let identity = try IdentityKeys.loadOrCreate(in: own, account: ghost, naming: ContainerNaming()).publicIdentity
        let file = container.appendingPathComponent("keys/\(ghost).pub").path
        if inPlace, let handle = FileHandle(forWritingAtPath: file) {
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: Data(identity.encoded.utf8))
            try handle.close()
        } else {
            #expect(FileManager.default.createFile(atPath: file, contents: Data(identity.encoded.utf8)))
        }
        #expect(chown(file, 4242, getegid()) == 0)
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
}
