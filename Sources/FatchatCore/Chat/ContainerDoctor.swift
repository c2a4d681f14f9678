import Foundation
import RecordStore

/// `fatchat doctor`: what a container is and where it lives, and what in that setup is known to lose or delay messages.
///
/// Pure: it takes what detection found, so every warning can be tested with made-up mounts.
public struct ContainerDoctor: Sendable, Equatable {
    /// Facts, one `label  value` line each.
    public var facts: [String] = []
    /// What to change, each with the fix; any warning makes `doctor` exit 2.
    public var warnings: [String] = []
    /// Good to know, nothing to fix.
    public var notes: [String] = []

    /// Builds the report for a container on `filesystem`; `daemonOptions` are the FUSE daemon's `-o` options when seen.
    public static func examine(_ summary: ContainerSummary, on filesystem: Filesystem, daemonOptions: [String]?) -> ContainerDoctor {
        var report = ContainerDoctor()
        report.facts.append("container    \(summary.url.path)")
        var where_ = filesystem.kind.name + (filesystem.isNetwork ? " (network)" : " (local)")
        if let mount = filesystem.mount {
            where_ += ", mounted at \(mount.mountPoint) from \(mount.source)"
        }
        report.facts.append("filesystem   \(where_)")
        if let mount = filesystem.mount {
            report.facts.append("mount        \(mount.options.joined(separator: ","))")
        }
        if let daemonOptions {
            report.facts.append("daemon       -o \(daemonOptions.joined(separator: ","))")
        }
        report.facts.append("engine       \(summary.engine.rawValue)")
        report.facts.append("journal      \(summary.mode.rawValue)")
        if summary.engine == .log {
            report.facts.append("log writers  \(summary.logWriters) (\(summary.logAccounts) account\(summary.logAccounts == 1 ? "" : "s"))")
        }

        if summary.engine == .sqlite, filesystem.isNetwork {
            report.warnings.append("This container keeps one shared SQLite file on \(filesystem.kind.name), a network filesystem, where that file loses or corrupts messages, and clients refuse to open it. Convert it: fatchat admin migrate-to-logs \(summary.url.path)")
        }
        switch filesystem.kind {
        case .sshfs:
            if !sshfsCachesBriefly(daemonOptions ?? []) {
                let seen = daemonOptions == nil ? " (its options could not be read, so they are taken to be the defaults)" : ""
                report.warnings.append("sshfs caches attributes and folder listings for 20 s by default\(seen), so other mounts see a new client's messages up to 20 s late, and Fatchat opens every log once a second to refresh the rest. Mount with -o cache=no (or -o attr_timeout=1,entry_timeout=1).")
            }
        case .glusterfs:
            if summary.engine == .log {
                report.notes.append("GlusterFS's default 1 s attribute and entry cache is fine for the log engine: it delays a message by about a second and loses nothing.")
            }
        case .smbnetfs:
            report.notes.append("smbnetfs has no hard links and stalls on extended attributes; Fatchat uses neither.")
            if summary.engine == .log {
                report.warnings.append(smbnetfsOwnership)
            }
        default:
            break
        }
        if summary.engine == .log, !filesystem.isNetwork {
            report.notes.append("The log engine works on a local disk too; the sqlite engine is faster there.")
        }
        return report
    }

    /// Why ownership means nothing through smbnetfs, and what to do about it.
    static let smbnetfsOwnership = "smbnetfs shows every file as the mounting user's and every folder as 0777, so Fatchat cannot check who owns a log folder, and `logs/` cannot be sticky: the SMB server's accounts and share permissions alone decide who may write. Replay still lets only a record's creator change it, but the creator is the account named in the log folder's name, which this mount cannot verify: anyone who can write to the share can write a log in another member's name, or remove theirs. Share it only with people you trust, or use a mount that shows owners (the kernel's cifs client with Unix extensions, or NFS with shared uids)."

    /// Whether sshfs was told to keep its caches short: `cache=no`, or attribute and entry timeouts of a second or less.
    static func sshfsCachesBriefly(_ options: [String]) -> Bool {
        func value(_ name: String) -> Double? {
            options.last { $0.hasPrefix(name + "=") }.flatMap { Double($0.dropFirst(name.count + 1)) }
        }
        if options.contains("cache=no") { return true }
        if let attr = value("attr_timeout"), let entry = value("entry_timeout"), attr <= 1, entry <= 1 { return true }
        return false
    }
}
