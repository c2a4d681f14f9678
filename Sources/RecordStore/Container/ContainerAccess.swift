import Foundation

/// Who may use a container's files: decided once, by whoever makes the container.
///
/// The modes apply to what is made, through the new file's descriptor; nothing
/// that was there before is ever chmod-ed or chgrp-ed. Asset files follow the
/// assets directory: readable by whoever may list it, written by nobody.
public struct ContainerAccess: Sendable, Equatable {
    /// The group that owns the container, or nil for the creator's own group.
    public var group: gid_t?
    /// The mode of the container directory and of `assets/`; nil leaves it to the umask.
    public var directoryMode: mode_t?
    /// The mode of `public.sqlite`; SQLite gives its -wal, -shm and -journal the same.
    public var databaseMode: mode_t?
    /// The mode of `container.json`, which nobody writes after it is made.
    public var descriptorMode: mode_t?

    /// Modes as the process's umask leaves them (0777 and 0666 before it).
    public static let umask = ContainerAccess()

    /// For the members of `group`: 2770, 0660, 0640; with `readableByOthers`, 2775, 0664, 0644.
    public static func group(_ group: gid_t, readableByOthers: Bool = false) -> ContainerAccess {
        ContainerAccess(group: group, directoryMode: readableByOthers ? 0o2775 : 0o2770,
                        databaseMode: readableByOthers ? 0o664 : 0o660, descriptorMode: readableByOthers ? 0o644 : 0o640)
    }

    /// For the creator alone: 0700, 0600, 0600; with `readableByOthers`, 0755, 0644, 0644.
    public static func owner(readableByOthers: Bool = false) -> ContainerAccess {
        ContainerAccess(group: nil, directoryMode: readableByOthers ? 0o755 : 0o700,
                        databaseMode: readableByOthers ? 0o644 : 0o600, descriptorMode: readableByOthers ? 0o644 : 0o600)
    }
}
