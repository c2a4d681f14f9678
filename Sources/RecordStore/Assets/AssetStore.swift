import Foundation

/// The `assets/` folder of a database: one file per distinct content, named by its SHA-256.
struct AssetStore: Sendable {
    let directory: URL

    /// Copies the asset's file in (unless that content is already stored) and fills in its hash and size.
    func ingest(_ asset: Asset) throws -> Asset {
        let source = asset.fileURL
        guard let input = InputStream(url: source), FileManager.default.isReadableFile(atPath: source.path) else {
            throw StoreError(.assetFileNotFound, "The asset file \(source.path) does not exist or cannot be read.")
        }
        var hasher = SHA256()
        var size: Int64 = 0
        input.open()
        defer { input.close() }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = input.read(&chunk, maxLength: chunk.count)
            if count < 0 { throw StoreError(.assetFileNotFound, "Reading the asset file \(source.path) failed.") }
            if count == 0 { break }
            hasher.update(chunk[0..<count])
            size += Int64(count)
        }
        let hash = hasher.finalize()
        try place(hash: hash, from: source)
        return Asset(fileURL: url(for: hash), contentHash: hash, size: size)
    }

    func url(for hash: String) -> URL { directory.appendingPathComponent(hash) }

    /// Puts the content in place under its hash, unless it is already there.
    ///
    /// Called again inside the write transaction, so that a concurrent
    /// collection by another process cannot leave a record without its file.
    func place(hash: String, from source: URL) throws {
        let target = url(for: hash)
        if FileManager.default.fileExists(atPath: target.path) { return }
        let temporary = directory.appendingPathComponent(".incoming-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: source, to: temporary)
            // The copy keeps the source's mode; everyone who can open the container must read it.
            chmod(temporary.path, 0o644)
            if rename(temporary.path, target.path) != 0 {
                throw StoreError(.serviceUnavailable, "Cannot store the asset \(hash): \(String(cString: strerror(errno))).")
            }
        } catch let error as StoreError {
            unlink(temporary.path)
            throw error
        } catch {
            unlink(temporary.path)
            throw StoreError(.assetFileNotFound, "Cannot copy the asset file \(source.path): \(error.localizedDescription)")
        }
    }

    /// Removes the files of `hashes` that no record uses any more; runs inside a write transaction.
    func collect(_ hashes: Set<String>, using writer: any StorageWriter) throws {
        for hash in hashes where try !writer.isAssetInUse(hash) {
            unlink(url(for: hash).path)
        }
    }
}
