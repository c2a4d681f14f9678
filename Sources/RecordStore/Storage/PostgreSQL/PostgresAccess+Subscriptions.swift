import Foundation
import PostgresNIO

/// Subscriptions on PostgreSQL: `fatchat.subscription`, each row writable by the role that saved it.
extension PostgresAccess {
    func subscriptionBodies(owner: String) throws -> [(id: String, body: String)] {
        var arguments = PostgresArguments()
        return try link.rows("SELECT id, body FROM fatchat.subscription WHERE owner = \(arguments.bind(owner)) ORDER BY id", arguments.binds).map {
            let columns = PostgresColumns($0)
            return (try columns.text(0, "id"), try columns.text(1, "body"))
        }
    }

    func saveSubscription(id: String, owner: String, body: String, parent: Subscription.Parent?) throws {
        var arguments = PostgresArguments()
        let sql = """
            INSERT INTO fatchat.subscription (owner, id, body, parent_zone, parent_name, parent_created)
            VALUES (\(arguments.bind(owner)), \(arguments.bind(id)), \(arguments.bind(body)), \(arguments.bind(parent?.recordID.zoneID.zoneName)),
                    \(arguments.bind(parent?.recordID.recordName)), \(arguments.bind(parent?.creationDate?.timeIntervalSince1970)))
            ON CONFLICT (owner, id) DO UPDATE SET body = excluded.body, parent_zone = excluded.parent_zone,
                parent_name = excluded.parent_name, parent_created = excluded.parent_created
            """
        try link.execute(sql, arguments.binds)
    }

    func deleteSubscription(id: String, owner: String) throws -> Bool {
        var arguments = PostgresArguments()
        return try link.execute("DELETE FROM fatchat.subscription WHERE owner = \(arguments.bind(owner)) AND id = \(arguments.bind(id))", arguments.binds) > 0
    }

    func deleteSubscriptions(parentedBy ids: [RecordID]) throws {
        guard !ids.isEmpty, try !link.rows("SELECT 1 FROM fatchat.subscription WHERE parent_zone IS NOT NULL LIMIT 1").isEmpty else { return }
        for id in ids {
            var arguments = PostgresArguments()
            try link.execute("SELECT fatchat.drop_orphan_subscriptions(\(arguments.bind(id.zoneID.zoneName)), \(arguments.bind(id.recordName)))", arguments.binds)
        }
    }

    func deleteSubscription(id: String, owner: String, parent: Subscription.Parent) throws -> Bool {
        var arguments = PostgresArguments()
        let created = parent.creationDate?.timeIntervalSince1970
        let sql = """
            DELETE FROM fatchat.subscription WHERE owner = \(arguments.bind(owner)) AND id = \(arguments.bind(id))
            AND parent_zone = \(arguments.bind(parent.recordID.zoneID.zoneName)) AND parent_name = \(arguments.bind(parent.recordID.recordName))
            AND (parent_created IS NOT DISTINCT FROM \(arguments.bind(created))::float8 OR abs(parent_created - \(arguments.bind(created))::float8) < \(arguments.bind(Subscription.Parent.sameInstantTolerance))::float8)
            """
        return try link.execute(sql, arguments.binds) > 0
    }

    func orphanedSubscriptions() throws -> [OrphanedSubscription] {
        var arguments = PostgresArguments()
        return try link.rows("""
            SELECT s.owner, s.id, s.parent_zone, s.parent_name FROM fatchat.subscription s
            LEFT JOIN fatchat.record r ON r.zone = s.parent_zone AND r.name = s.parent_name
            WHERE s.parent_zone IS NOT NULL
            AND (r.id IS NULL OR (s.parent_created IS NOT NULL AND abs(r.created - s.parent_created) >= \(arguments.bind(Subscription.Parent.sameInstantTolerance))::float8))
            ORDER BY s.owner, s.id
            """, arguments.binds).compactMap { row in
            let columns = PostgresColumns(row)
            guard let owner = try? columns.text(0, "owner"), let id = try? columns.text(1, "id"),
                  let zone = try? columns.text(2, "parent_zone"), let name = try? columns.text(3, "parent_name") else { return nil }
            return OrphanedSubscription(owner: owner, subscriptionID: id, parent: RecordID(recordName: name, zoneID: ZoneID(zoneName: zone)))
        }
    }
}
