import Foundation

extension RecordDatabase {
    /// Copies a fetched asset's stored file to `destination`, which must not exist yet.
    ///
    /// The file is reached by its checked content hash inside this database's
    /// assets directory, without following a symlink, and must match that hash.
    public func copyAsset(_ asset: Asset, to destination: URL) throws {
        guard let hash = asset.contentHash else {
            throw StoreError(.invalidArguments, "The asset \(asset.fileURL.path) was never stored; there is nothing to copy.")
        }
        try assets.export(hash: hash, to: destination)
    }
}

extension Asset {
    /// Checks that `url` can be stored as an asset: a readable regular file (a FIFO, a device or a directory is refused).
    public static func checkSource(_ url: URL) throws {
        close(try AssetStore.openSource(url))
    }
}
