import Foundation

extension Container {
    /// Loads (or makes) this user's keys, publishes the public half in the container, and opens the others' keys.
    ///
    /// A failure here never keeps the container from opening: records are then
    /// saved unsigned or with a key others cannot find, and read as unverified.
    /// The reason goes to standard error (or to the report handler, for a key that
    /// could not be published), so the user can fix it.
    static func accountKeys(container: URL, engine: StorageEngine, privateRoot: URL, user: UserIdentity, naming: ContainerNaming,
                            publicStorage: any RecordStorage) -> AccountKeys? {
        let account = user.recordID.recordName
        let own: IdentityKeys
        do {
            own = try IdentityKeys.loadOrCreate(in: privateRoot, account: account, naming: naming)
        } catch {
            let reason = (error as? StoreError)?.message ?? "\(error)"
            FileHandle.standardError.write(Data("\(naming.programName.lowercased()): no identity key, so what you save is unsigned: \(reason)\n".utf8))
            return nil
        }
        let directory = KeyDirectory(container: container, engine: engine, naming: naming, storage: publicStorage)
        let keys = AccountKeys(directory: directory, own: own, privateRoot: privateRoot, naming: naming)
        do {
            try directory.publish(own.publicIdentity)
        } catch {
            let reason = (error as? StoreError)?.message ?? "\(error)"
            keys.warn("Your key could not be published, so others see what you write as unverified: \(reason)")
        }
        return keys
    }
}
