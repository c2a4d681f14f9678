import FatchatCore
import Foundation
import RecordStore
import Testing

/// What `doctor` warns about, with made-up mounts: each warning a plausible setup would change.
@Suite struct ContainerDoctorTests {
    static func summary(_ engine: StorageEngine) -> ContainerSummary {
        ContainerSummary(url: URL(fileURLWithPath: "/srv/chat"), identifier: "X", mode: .network, engine: engine,
                         logWriters: 3, logAccounts: 2, hasSharedFile: engine == .sqlite)
    }

    static func on(_ type: String) -> Filesystem {
        let table = MountTable.parse("40 27 0:40 / /srv rw,nosuid - \(type) host:/x rw,user_id=0\n")
        return Filesystem(kind: .classify(statfsType: 0x6573_5546, mountType: type), mount: table.mount(holding: "/srv/chat"))
    }

    @Test func sshfsWithItsDefaultCacheIsWarnedAboutAndShortTimeoutsAreNot() {
        let slow = ContainerDoctor.examine(Self.summary(.log), on: Self.on("fuse.sshfs"), daemonOptions: ["IdentityFile=/k"])
        #expect(slow.warnings.count == 1 && slow.warnings[0].contains("-o cache=no"), "\(slow.warnings)")
        #expect(slow.facts.contains("log writers  3 (2 accounts)"), "\(slow.facts)")
        for options in [["cache=no"], ["attr_timeout=1", "entry_timeout=0.5"]] {
            #expect(ContainerDoctor.examine(Self.summary(.log), on: Self.on("fuse.sshfs"), daemonOptions: options).warnings.isEmpty, "\(options)")
        }
        let half = ContainerDoctor.examine(Self.summary(.log), on: Self.on("fuse.sshfs"), daemonOptions: ["attr_timeout=1"])
        #expect(half.warnings.count == 1)
    }

    @Test func aSingleFileOnANetworkFilesystemNamesTheMigration() {
        let report = ContainerDoctor.examine(Self.summary(.sqlite), on: Self.on("fuse.glusterfs"), daemonOptions: nil)
        #expect(report.warnings.contains { $0.contains("fatchat admin migrate-to-logs /srv/chat") }, "\(report.warnings)")
        let logs = ContainerDoctor.examine(Self.summary(.log), on: Self.on("fuse.glusterfs"), daemonOptions: nil)
        #expect(logs.warnings.isEmpty && logs.notes.contains { $0.contains("fine for the log engine") }, "\(logs)")
    }

    @Test func smbnetfsIsWarnedThatOwnersCannotBeChecked() {
        let report = ContainerDoctor.examine(Self.summary(.log), on: Self.on("fuse.smbnetfs"), daemonOptions: nil)
        #expect(report.warnings.count == 1, "\(report.warnings)")
        let warning = report.warnings.first ?? ""
        #expect(warning.contains("cannot verify") && warning.contains("in another member's name"), "\(warning)")
        #expect(!Self.on("fuse.smbnetfs").kind.showsOwnersAndModes && Self.on("fuse.glusterfs").kind.showsOwnersAndModes)
    }
}
