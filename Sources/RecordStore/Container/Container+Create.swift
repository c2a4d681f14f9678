import Foundation

extension Container {
    /// Makes a container in `url`, which must hold none yet, then opens it: what a program's `init` command does.
    ///
    /// A directory that holds any container entry (a descriptor, a public
    /// database or its journals, `assets`) is refused and left as it is. A
    /// directory that exists already is used only if it has the group and
    /// mode `access` asks for: nothing that was there before is changed.
    ///
    /// For the `postgresql` engine, the server's schema is made first (unless
    /// the database has it already), as the current OS user's role, so that a
    /// server that cannot be reached leaves no directory behind.
    public static func create(at url: URL, access: ContainerAccess, options: Options = Options()) throws -> Container {
        if options.engine == .postgresql {
            guard let text = options.postgresURL else {
                throw StoreError(.invalidArguments, "A postgresql container needs the server's URL, such as postgresql://HOST/DATABASE.")
            }
            _ = try PostgresStorage(endpoint: try PostgresEndpoint(url: text), assetsDirectory: url.appendingPathComponent(ContainerDirectory.assetsName),
                                    naming: options.naming, create: true)
        }
        _ = try ContainerDirectory.open(url, creating: access, exclusive: true, naming: options.naming) {
            ContainerDescriptor.new(for: url, mode: options.mode, engine: options.engine, postgresURL: options.postgresURL)
        }
        var opening = options
        opening.create = false
        return try Container(url: url, options: opening)
    }
}
