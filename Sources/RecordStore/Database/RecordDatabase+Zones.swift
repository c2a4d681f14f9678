import Foundation

/// What a custom zone can do, as CloudKit's `CKRecordZone.Capabilities`.
public struct ZoneCapabilities: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Saves and deletes go into the change feed, so `fetchChanges(in:)` can follow the zone.
    /// A zone without it (a work queue, say) costs less per write, and its changes are never seen.
    public static let fetchChanges = ZoneCapabilities(rawValue: 1)
}

extension RecordDatabase {
    /// Creates a custom zone, or changes the capabilities of one. Only private databases have them.
    public func saveZone(_ zone: ZoneID, capabilities: ZoneCapabilities = .fetchChanges) throws {
        guard scope == .private else {
            throw StoreError(.invalidArguments, "The public database has only the default zone; create custom zones in a private database.")
        }
        guard Identifier.isValid(zone.zoneName) else {
            throw StoreError(.invalidArguments, "Zone name '\(zone.zoneName)' is not valid: use a letter followed by letters, digits or '_'.")
        }
        try storage.write { try $0.createZone(zone.zoneName, date: Date(), keepsChanges: capabilities.contains(.fetchChanges)) }
    }

    /// A zone's capabilities; `zoneNotFound` if there is no such zone. The default zone can fetch changes.
    public func capabilities(of zone: ZoneID) throws -> ZoneCapabilities {
        guard let keepsChanges = try storage.read({ try $0.zoneKeepsChanges(zone.zoneName) }) else {
            throw StoreError(.zoneNotFound, "There is no zone '\(zone.zoneName)'.")
        }
        return keepsChanges ? .fetchChanges : []
    }

    /// Deletes a custom zone and every record in it.
    public func deleteZone(_ zone: ZoneID) throws {
        guard !zone.isDefault else {
            throw StoreError(.invalidArguments, "The default zone cannot be deleted.")
        }
        try storage.write { writer in
            guard let keepsChanges = try writer.zoneKeepsChanges(zone.zoneName) else {
                throw StoreError(.zoneNotFound, "There is no zone '\(zone.zoneName)' to delete.")
            }
            let now = Date()
            var orphaned: Set<String> = []
            for id in try writer.recordIDs(inZone: zone.zoneName) {
                guard let removed = try writer.record(id, keys: nil) else { continue }
                try writer.remove(removed)
                if keepsChanges {
                    try writer.appendChange(id, type: removed.recordType, kind: .deleted, previousFields: removed.fields, date: now)
                }
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
