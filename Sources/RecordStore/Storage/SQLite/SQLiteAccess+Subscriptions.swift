import Foundation
import GRDB

/// Subscriptions on SQLite: the `subscription` table, and the `parent_*` columns that tie one to a record (schema v5).
extension SQLiteAccess {
    func subscriptionBodies(owner: String) throws -> [(id: String, body: String)] {
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT id, body FROM subscription WHERE owner = ? ORDER BY id"), arguments: [owner])
        var bodies: [(id: String, body: String)] = []
        while let row = try rows.next() {
            try StoredColumns.skippingDamage {
                try StoredColumns.decoding("subscription", key: "\(owner)/\(StoredColumns.label(row, 0))") {
                    bodies.append((try StoredColumns.text(row, 0, "id"), try StoredColumns.text(row, 1, "body")))
                }
            }
        }
        return bodies
    }

    func saveSubscription(id: String, owner: String, body: String, parent: Subscription.Parent?) throws {
        try db.execute(sql: """
            INSERT INTO subscription (owner, id, body, parent_zone, parent_name, parent_created) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (owner, id) DO UPDATE SET body = excluded.body, parent_zone = excluded.parent_zone,
                parent_name = excluded.parent_name, parent_created = excluded.parent_created
            """, arguments: [owner, id, body, parent?.recordID.zoneID.zoneName, parent?.recordID.recordName,
                              parent?.creationDate?.timeIntervalSince1970])
    }

    func deleteSubscription(id: String, owner: String) throws -> Bool {
        try db.execute(sql: "DELETE FROM subscription WHERE owner = ? AND id = ?", arguments: [owner, id])
        return db.changesCount > 0
    }

    func deleteSubscriptions(parentedBy ids: [RecordID]) throws {
        // Most deletes (the outbox's, messages) find no parented subscription at all; one indexed look settles that.
        guard !ids.isEmpty, try Bool.fetchOne(db.cachedStatement(sql: """
            SELECT EXISTS (SELECT 1 FROM subscription WHERE parent_zone IS NOT NULL)
            """)) == true else { return }
        let statement = try db.cachedStatement(sql: "DELETE FROM subscription WHERE parent_zone = ? AND parent_name = ?")
        for id in ids { try statement.execute(arguments: [id.zoneID.zoneName, id.recordName]) }
    }

    func deleteSubscription(id: String, owner: String, parent: Subscription.Parent) throws -> Bool {
        let created = parent.creationDate?.timeIntervalSince1970
        try db.execute(sql: """
            DELETE FROM subscription WHERE owner = ? AND id = ? AND parent_zone = ? AND parent_name = ?
            AND (parent_created IS ? OR abs(parent_created - ?) < ?)
            """, arguments: [owner, id, parent.recordID.zoneID.zoneName, parent.recordID.recordName, created, created,
                               Subscription.Parent.sameInstantTolerance])
        return db.changesCount > 0
    }

    /// A parented subscription whose record is gone, or is a later record with the same name (created at another instant).
    func orphanedSubscriptions() throws -> [OrphanedSubscription] {
        try Row.fetchAll(db, sql: """
            SELECT s.owner, s.id, s.parent_zone, s.parent_name FROM subscription s
            LEFT JOIN record r ON r.zone = s.parent_zone AND r.name = s.parent_name
            WHERE s.parent_zone IS NOT NULL
            AND (r.id IS NULL OR (s.parent_created IS NOT NULL AND abs(r.created - s.parent_created) >= ?))
            ORDER BY s.owner, s.id
            """, arguments: [Subscription.Parent.sameInstantTolerance]).compactMap { row in
            // Anyone in the group can write this table; a row of the wrong types is skipped, never trusted.
            guard let owner = try? row.decode(String.self, atIndex: 0), let id = try? row.decode(String.self, atIndex: 1),
                  let zone = try? row.decode(String.self, atIndex: 2), let name = try? row.decode(String.self, atIndex: 3) else { return nil }
            return OrphanedSubscription(owner: owner, subscriptionID: id, parent: RecordID(recordName: name, zoneID: ZoneID(zoneName: zone)))
        }
    }

    /// Schema v5: ties each older subscription to the one record its predicate names, and deletes it if that record is gone.
    ///
    /// Before v5 a channel's deletion left its members' subscriptions behind,
    /// and they fired again for a new channel of the same name. A row that
    /// does not decode, or names no record or several, is left as it is.
    static func adoptParents(_ db: GRDB.Database) throws {
        let rows = try Row.fetchAll(db, sql: "SELECT owner, id, body FROM subscription WHERE parent_zone IS NULL")
        for row in rows {
            guard let owner = try? row.decode(String.self, atIndex: 0), let id = try? row.decode(String.self, atIndex: 1),
                  let body = try? row.decode(String.self, atIndex: 2),
                  var subscription = try? JSONDecoder().decode(Subscription.self, from: Data(body.utf8)),
                  subscription.namedRecords.count == 1, let named = subscription.namedRecords.first else { continue }
            guard let record = try Row.fetchOne(db, sql: "SELECT created FROM record WHERE zone = ? AND name = ?",
                                                arguments: [named.zoneID.zoneName, named.recordName]) else {
                try db.execute(sql: "DELETE FROM subscription WHERE owner = ? AND id = ?", arguments: [owner, id])
                continue
            }
            // A creation date that is not a number ties the subscription to the name alone.
            let created = (try? record.decode(Double?.self, atIndex: 0)).flatMap { $0?.isFinite == true ? $0 : nil }
            subscription.parent = Subscription.Parent(recordID: named, creationDate: created.map(Date.init(timeIntervalSince1970:)))
            guard let adopted = try? JSONEncoder().encode(subscription) else { continue }
            try db.execute(sql: """
                UPDATE subscription SET body = ?, parent_zone = ?, parent_name = ?, parent_created = ? WHERE owner = ? AND id = ?
                """, arguments: [String(decoding: adopted, as: UTF8.self), named.zoneID.zoneName, named.recordName, created, owner, id])
        }
    }
}
