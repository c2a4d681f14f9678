import Foundation
import ProcessTestKit
import Testing
@testable import RecordStore

/// Detection of the filesystem a container lives on: mountinfo parsing, the FUSE subtype, and real FUSE mounts.
@Suite struct FilesystemDetectionTests {
    /// A mountinfo as the kernel writes it, with an escaped space in one mount point and optional fields in others.
    static let sample = """
        22 27 0:21 / /proc rw,relatime - proc proc rw
        27 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro
        40 27 0:40 / /srv/chat rw,nosuid,nodev,relatime shared:20 - fuse.sshfs root@10.0.0.2:/export rw,user_id=0,group_id=0
        41 27 0:41 / /srv/chat\\040room rw,nosuid,nodev,relatime - fuse.glusterfs fcbrick:/vol rw,user_id=0,group_id=0,default_permissions,allow_other,max_read=131072
        42 27 0:42 / /mnt/smb rw,nosuid,nodev - fuse.smbnetfs smbnetfs rw,user_id=0,group_id=0
        43 27 0:43 / /mnt/nfs rw,relatime - nfs4 server:/home rw,vers=4.2,rsize=1048576
        44 27 0:44 / /mnt/b rw,relatime - fuse.bindfs /data rw,user_id=0,group_id=0
        45 27 0:45 / /mnt/p9 rw - 9p tag rw,trans=virtio
        this line is garbage
        46 27 0:46 / relative rw - ext4 /dev/x rw
        47 27 0:47 / /mnt/short rw
        """

    @Test func parsesMountinfoAndSkipsLinesOfAnotherShape() {
        let table = MountTable.parse(Self.sample)
        #expect(table.mounts.count == 8)
        let sshfs = table.mounts.first { $0.type == "fuse.sshfs" }
        #expect(sshfs?.mountPoint == "/srv/chat")
        #expect(sshfs?.source == "root@10.0.0.2:/export")
        #expect(sshfs?.options.contains("nosuid") == true && sshfs?.options.contains("user_id=0") == true)
        #expect(table.mounts.contains { $0.mountPoint == "/srv/chat room" && $0.type == "fuse.glusterfs" })
    }

    @Test func theLongestMountPointOnAComponentBoundaryHoldsThePath() {
        let table = MountTable.parse(Self.sample)
        #expect(table.mount(holding: "/srv/chat/logs/x.log")?.type == "fuse.sshfs")
        #expect(table.mount(holding: "/srv/chat")?.type == "fuse.sshfs")
        #expect(table.mount(holding: "/srv/chat room/c")?.type == "fuse.glusterfs")
        // `/srv/chatter` is not inside `/srv/chat`.
        #expect(table.mount(holding: "/srv/chatter")?.type == "ext4")
        #expect(table.mount(holding: "/home/alice")?.mountPoint == "/")
    }

    @Test func aLaterMountOnTheSamePointHidesTheEarlierOne() {
        let table = MountTable.parse("""
            27 1 8:1 / / rw - ext4 /dev/sda1 rw
            50 27 0:50 / /mnt rw - ext4 /dev/sdb1 rw
            51 50 0:51 / /mnt rw - fuse.sshfs host:/x rw
            """)
        #expect(table.mount(holding: "/mnt/c")?.type == "fuse.sshfs")
    }

    @Test func unescapesOctalAndLeavesAnythingElse() {
        #expect(MountTable.unescape("/a\\040b\\011c\\134d") == "/a b\tc\\d")
        #expect(MountTable.unescape("/a\\9zz\\04") == "/a\\9zz\\04")
        #expect(MountTable.unescape("\\") == "\\")
    }

    @Test func classifiesTheFuseSubtypeAndNetworkFilesystems() {
        let fuse: UInt64 = 0x6573_5546
        #expect(FilesystemKind.classify(statfsType: fuse, mountType: "fuse.sshfs") == .sshfs)
        #expect(FilesystemKind.classify(statfsType: fuse, mountType: "fuse.glusterfs") == .glusterfs)
        #expect(FilesystemKind.classify(statfsType: fuse, mountType: "fuse.smbnetfs") == .smbnetfs)
        #expect(FilesystemKind.classify(statfsType: fuse, mountType: "fuse.bindfs") == .bindfs)
        #expect(FilesystemKind.classify(statfsType: fuse, mountType: "fuse.rclone") == .otherFUSE("fuse.rclone"))
        #expect(FilesystemKind.classify(statfsType: fuse, mountType: nil) == .otherFUSE("fuse"))
        #expect(FilesystemKind.classify(statfsType: 0x6969, mountType: "nfs4") == .nfs)
        #expect(FilesystemKind.classify(statfsType: 0xFF53_4D42, mountType: "cifs") == .cifs)
        #expect(FilesystemKind.classify(statfsType: 0x0102_1997, mountType: "9p") == .v9fs)
        #expect(FilesystemKind.classify(statfsType: 0xEF53, mountType: "ext4") == .local("ext4"))
        for kind in [FilesystemKind.sshfs, .glusterfs, .smbnetfs, .bindfs, .nfs, .cifs, .v9fs, .otherFUSE("fuse")] {
            #expect(kind.isNetwork, "\(kind)")
        }
        #expect(!FilesystemKind.local("ext4").isNetwork)
    }

    @Test func aDirectoryNotMadeYetIsDetectedByItsParent() throws {
        let dir = try TemporaryDirectory()
        let here = Filesystem.detect(for: dir.url)
        let later = Filesystem.detect(for: dir.url.appendingPathComponent("not/made/yet"))
        #expect(here == later)
        #expect(!here.isNetwork, "\(here)")
    }

    @Test func readsTheDaemonsOptionsFromItsCommandLine() {
        let line = ["sshfs", "-o", "port=2222,IdentityFile=/k", "-ocache=no", "root@127.0.0.1:/x", "/mnt/a"]
        #expect(FuseDaemon.options(ofCommandLine: line, program: "sshfs", mountPoint: "/mnt/a") == ["port=2222", "IdentityFile=/k", "cache=no"])
        #expect(FuseDaemon.options(ofCommandLine: line, program: "sshfs", mountPoint: "/mnt/b") == nil)
        #expect(FuseDaemon.options(ofCommandLine: ["/usr/sbin/glusterfs", "--attribute-timeout=0", "/mnt/a"], program: "glusterfs",
                                   mountPoint: "/mnt/a") == ["attribute-timeout=0"])
    }

    @Test("detection on real sshfs and bindfs mounts",
          .enabled("needs FUSE: /dev/fuse, sshfs, openssh-server, bindfs, fuse3") { FuseMounts.isAvailable() })
    func detectsRealFuseMounts() async throws {
        let directory = try TemporaryDirectory()
        let mounts = try await FuseMounts.up(in: directory.url)
        defer { FuseMounts.down(in: directory.url) }
        let sshfs = Filesystem.detect(for: mounts.appendingPathComponent("sshfs-a/container"))
        #expect(sshfs.kind == .sshfs && sshfs.isNetwork, "\(sshfs)")
        #expect(sshfs.mount?.mountPoint == mounts.appendingPathComponent("sshfs-a").resolvingSymlinksInPath().path)
        let bindfs = Filesystem.detect(for: mounts.appendingPathComponent("bindfs-a"))
        #expect(bindfs.kind == .bindfs && bindfs.isNetwork, "\(bindfs)")
        #expect(!Filesystem.detect(for: directory.url).isNetwork)
        // The sshfs daemon's own options are visible to root.
        let options = sshfs.mount.flatMap { FuseDaemon.options(program: "sshfs", mountPoint: $0.mountPoint) }
        #expect(options?.contains { $0.hasPrefix("IdentityFile=") } == true, "\(String(describing: options))")
    }
}
