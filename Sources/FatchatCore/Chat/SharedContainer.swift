import Foundation
import RecordStore

/// `fatchat init`: a container directory that the members of a group can share.
public enum SharedContainer {
    /// Makes the container in `url`, which must hold none yet.
    ///
    /// With `group`, the directory is setgid to it and only the group may use
    /// it (2770, the database 0660, assets 0640); without, it is the creator's
    /// alone (0700, 0600). `readableByOthers` lets every local user read it
    /// (2775 and 0664, or 0755 and 0644). `engine` chooses how the public
    /// database is kept: one SQLite file, or a log per client.
    public static func make(at url: URL, group: String?, readableByOthers: Bool = false, mode: JournalMode?,
                            engine: StorageEngine = .sqlite) throws -> Container {
        var access = ContainerAccess.owner(readableByOthers: readableByOthers)
        if let group {
            guard let entry = getgrnam(group) else { throw CommandError("There is no group '\(group)'; create it with groupadd first.") }
            access = .group(entry.pointee.gr_gid, readableByOthers: readableByOthers)
        }
        var options = Container.Options(mode: mode, naming: .fatchat)
        options.engine = engine
        return try Container.create(at: url, access: access, options: options)
    }
}

extension ContainerNaming {
    /// Fatchat's names for RecordStore's messages: its data directory, `fatchat init`, `--fs-mode` and `fatchat admin check`.
    public static let fatchat = ContainerNaming(programName: "Fatchat", dataDirectoryName: "fatchat",
                                                createCommand: "fatchat init", journalModeOption: "--fs-mode",
                                                checkCommand: "fatchat admin check")
}
