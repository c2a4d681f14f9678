import Foundation

extension RecordDatabase {
    /// Creates a custom zone. Only private databases have them.
    public func saveZone(_ zone: ZoneID) throws {
        guard scope == .private else {
            throw StoreError(.invalidArguments, "The public database has only the default zone; create custom zones in a private database.")
        }
        guard Identifier.isValid(zone.zoneName) else {
            throw StoreError(.invalidArguments, "Zone name '\(zone.zoneName)' is not valid: use a letter followed by letters, digits or '_'.")
        }
        try storage.write { try $0.createZone(zone.zoneName, date: Date()) }
    }

    /// Deletes a custom zone and every record in it.
    public func deleteZone(_ zone: ZoneID) throws {
        guard !zone.isDefault else {
            throw StoreError(.invalidArguments, "The default zone cannot be deleted.")
        }
        try storage.write { writer in
            guard try writer.zoneExists(zone.zoneName) else {
                throw StoreError(.zoneNotFound, "There is no zone '\(zone.zoneName)' to delete.")
            }
            let now = Date()
            var orphaned: Set<String> = []
            for id in try writer.recordIDs(inZone: zone.zoneName) {
                guard let removed = try writer.record(id, keys: nil) else { continue }
                try writer.remove(removed)
                try writer.appendChange(id, type: removed.recordType, kind: .deleted, previousFields: removed.fields, date: now)
                orphaned.formUnion(removed.assets.compactMap(\.contentHash))
            }
            try writer.removeZone(zone.zoneName)
            try assets.collect(orphaned, using: writer)
        }
    }

    /// Every zone of this database, the default zone first.
    public func allZones() throws -> [ZoneID] {
        try storage.read { try $0.zoneNames() }
            .map { ZoneID(zoneName: $0) }
            .sorted { $0.isDefault && !$1.isDefault }
    }
}

extension RecordDatabase {
    /// Every record in a zone, in no particular order. Meant for small zones, such as an outbox.
    public func allRecords(in zone: ZoneID) throws -> [Record] {
        try storage.read { reader in
            try reader.recordIDs(inZone: zone.zoneName).compactMap { try reader.record($0, keys: nil) }
        }
    }
}
