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
    ///
    /// With no `engine`, a container on a network filesystem gets the `log`
    /// engine and one on a local disk the `sqlite` one (`mode: .local` says the
    /// filesystem is safe whatever detection sees). `sqlite` asked for on a
    /// network filesystem is refused: clients would refuse to open it anyway,
    /// since one shared file there loses messages. `postgresURL` puts the
    /// public database on that PostgreSQL server instead (the `postgresql`
    /// engine), making its schema there as the current user's role.
    public static func make(at url: URL, group: String?, readableByOthers: Bool = false, mode: JournalMode?,
                            engine: StorageEngine? = nil, postgresURL: String? = nil) throws -> Container {
        var access = ContainerAccess.owner(readableByOthers: readableByOthers)
        if let group {
            guard let entry = getgrnam(group) else { throw CommandError("There is no group '\(group)'; create it with groupadd first.") }
            access = .group(entry.pointee.gr_gid, readableByOthers: readableByOthers)
        }
        var options = Container.Options(mode: mode, naming: .fatchat)
        if let postgresURL {
            guard engine == nil || engine == .postgresql else {
                throw CommandError("--postgres keeps the public database on a PostgreSQL server; leave out --engine \(engine?.rawValue ?? "") or --postgres.")
            }
            options.engine = .postgresql
            options.postgresURL = postgresURL
        } else if engine == .postgresql {
            throw CommandError("The postgresql engine needs the server: give it as --postgres 'postgresql://HOST/DATABASE'.")
        } else {
            options.engine = try chooseEngine(engine, at: url, mode: mode)
        }
        options.refusesSingleFileOnNetwork = true
        return try Container.create(at: url, access: access, options: options)
    }

    /// The engine `init` gives a container in `url`: the one asked for, else the one its filesystem calls for.
    public static func chooseEngine(_ asked: StorageEngine?, at url: URL, mode: JournalMode?) throws -> StorageEngine {
        guard mode != .local else { return asked ?? .sqlite }
        let filesystem = Filesystem.detect(for: url)
        guard filesystem.isNetwork else { return asked ?? .sqlite }
        if asked == .sqlite {
            throw CommandError("\(url.path) is on \(filesystem.kind.name), a network filesystem, where one shared SQLite file loses or corrupts messages, and clients refuse to open one there. Leave out --engine (the log engine is the default here), or add --fs-mode local if only this one mount will ever use it.")
        }
        return .log
    }
}

extension ContainerNaming {
    /// Fatchat's names for RecordStore's messages: its data directory, `fatchat init`, `--fs-mode` and `fatchat admin check`.
    public static let fatchat = ContainerNaming(programName: "Fatchat", dataDirectoryName: "fatchat",
                                                createCommand: "fatchat init", journalModeOption: "--fs-mode",
                                                checkCommand: "fatchat admin check",
                                                migrateCommand: "fatchat admin migrate-to-logs")
}
