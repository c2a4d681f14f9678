import Foundation

extension Container {
    /// Makes a container in `url`, which must hold none yet, then opens it: what a program's `init` command does.
    ///
    /// A directory that holds any container entry (a descriptor, a public
    /// database or its journals, `assets`) is refused and left as it is. A
    /// directory that exists already is used only if it has the group and
    /// mode `access` asks for: nothing that was there before is changed.
    public static func create(at url: URL, access: ContainerAccess, options: Options = Options()) throws -> Container {
        _ = try ContainerDirectory.open(url, creating: access, exclusive: true, naming: options.naming) {
            ContainerDescriptor.new(for: url, mode: options.mode, engine: options.engine)
        }
        var opening = options
        opening.create = false
        return try Container(url: url, options: opening)
    }
}
