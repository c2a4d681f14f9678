import Foundation
import GRDB

extension SQLiteStorage {
    /// The problems `integrityProblems` finds in the file at `path`, opened read-only with no migration.
    ///
    /// Opening a database for use refuses a schema RecordStore did not make; this
    /// only reads, so it can still list what is wrong with such a file, and
    /// nothing planted in it can run.
    static func inspect(path: String, assetsDirectory: URL, naming: ContainerNaming) throws -> [String] {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(5)
        do {
            _ = try FileIdentity.of(path, naming: naming)
            let queue = try DatabaseQueue(path: path, configuration: config)
            defer { try? queue.close() }
            return try queue.read { db in
                guard try db.tableExists("fatchat_meta") else {
                    return ["\(path) is not a \(naming.programName) database"]
                }
                return try SQLiteAccess(db: db, assets: assetsDirectory, naming: naming).integrityProblems()
            }
        } catch let damage as DamagedRow {
            throw damage.storeError
        } catch {
            throw StoreError.translating(error, path: path)
        }
    }
}
