import Foundation
import PostgresNIO

/// The change log on PostgreSQL: `fatchat.change`, read as a feed with each record as it is now, appended to and pruned.
extension PostgresAccess {
    func changes(after sequence: Int64, zone: String?, limit: Int) throws -> ChangeScan {
        try scan(link.rows(zone == nil ? Self.changesSQL : Self.changesInZoneSQL, Self.changesBinds(after: sequence, zone: zone, limit: limit)))
    }

    /// The bounds and the scan in one statement, whose one snapshot holds both, inside a transaction
    /// or not (`PostgresStorage.changesWithBounds`). Each row carries the bounds in its last two
    /// columns; with no entry after `sequence`, one row carries only them.
    ///
    /// Every receiver runs this at each commit, so the server must not plan it each time. Kept
    /// prepared, it still was: the server found a plan for the bound values cheaper than a generic
    /// one, and planned again at every call. Since schema 2 it is the function `fatchat.feed`,
    /// which plans once per session: 0.07–0.10 ms a call against 0.36–0.57 ms (`pgbench -M
    /// prepared`, a one-entry fetch). A database of schema 1 is sent the statement, prepared.
    func changesWithBounds(after sequence: Int64, zone: String?, limit: Int) throws -> (bounds: ChangeBounds, scan: ChangeScan?) {
        let rows: [PostgresRow]
        if schemaVersion >= 2 {
            var binds = Self.changesBinds(after: sequence, zone: nil, limit: limit)
            binds.append(zone)
            rows = try link.preparedRows(Feed.self, binds)
        } else {
            let binds = Self.changesBinds(after: sequence, zone: zone, limit: limit)
            rows = try zone == nil ? link.preparedRows(FeedStatement.self, binds) : link.preparedRows(FeedInZoneStatement.self, binds)
        }
        let bounds = try Self.changeBounds(rows.first, from: Self.boundsColumn)
        return (bounds, sequence >= bounds.pruned ? try scan(rows) : nil)
    }

    /// Where the bounds begin in a row of `changesWithBounds`: after the change's 8 columns and its record's.
    private static let boundsColumn = 8 + recordColumnCount

    /// The entries after `$1`, at most `$2`, with each record as it is now; in zone `$3` when asked.
    private static func changesSQL(inZone: Bool) -> String {
        """
        SELECT c.seq, c.zone, c.name, c.type, c.kind, c.previous, c.at, r.id, \(Self.recordColumns(of: "r"))
        FROM fatchat.change c LEFT JOIN fatchat.record r ON r.zone = c.zone AND r.name = c.name
        WHERE c.seq > $1\(inZone ? " AND c.zone = $3" : "") ORDER BY c.seq LIMIT $2
        """
    }

    private static let changesSQL = changesSQL(inZone: false)
    private static let changesInZoneSQL = changesSQL(inZone: true)

    /// `changesWithBounds`: `$1` and `$2` as in `changesSQL`, and `$3` the zone, or NULL for the whole log.
    private enum Feed: PreparedSQL {
        static let name = "fatchat_feed"
        static let sql = "SELECT * FROM fatchat.feed($1::bigint, $2::bigint, $3::text)"
    }

    /// On schema 1, `changesWithBounds` of the whole log, and of one zone.
    private enum FeedStatement: PreparedSQL {
        static let name = "fatchat_feed_statement"
        static let sql = withBounds(changesSQL)
    }

    private enum FeedInZoneStatement: PreparedSQL {
        static let name = "fatchat_feed_in_zone_statement"
        static let sql = withBounds(changesInZoneSQL)
    }

    /// The function behind `Feed` (schema 2), planned once per session.
    static let feedFunction = """
        CREATE OR REPLACE FUNCTION fatchat.feed(bigint, bigint, text)
        RETURNS TABLE (o_seq bigint, o_zone text, o_name text, o_type text, o_kind smallint, o_previous text, o_at double precision,
                       o_id bigint, o_record_type text, o_fields text, o_created double precision, o_modified double precision,
                       o_creator text, o_modifier text, o_tag text, o_latest bigint, o_pruned text)
        LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $fn$
        BEGIN
            IF $3 IS NULL THEN
                RETURN QUERY \(withBounds(changesSQL));
            ELSE
                RETURN QUERY \(withBounds(changesInZoneSQL));
            END IF;
        END $fn$
        """

    private static func withBounds(_ changes: String) -> String {
        "SELECT c.*, b.* FROM (\(changeBoundsSQL)) b LEFT JOIN (\(changes)) c ON true ORDER BY c.seq"
    }

    private static func changesBinds(after sequence: Int64, zone: String?, limit: Int) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(sequence)
        binds.append(Int64(limit))
        if let zone { binds.append(zone) }
        return binds
    }

    private func scan(_ rows: [PostgresRow]) throws -> ChangeScan {
        var scan = ChangeScan()
        var decoded: [RecordID: Record] = [:]
        let passedOver = ChangeRow.passedOver
        for row in rows {
            let columns = PostgresColumns(row)
            // The bounds' row when no entry follows them.
            if columns.isNull(0) { continue }
            let seq = try columns.integer(0, "seq")
            scan.sequences.append(seq)
            if !passedOver.isEmpty, let type = try? columns.text(3, "type"), passedOver.contains(type) { continue }
            do {
                scan.rows.append(try decodeChange(columns, sequence: seq, decoded: &decoded))
            } catch let damage as DamagedRow {
                DamagedRowLog.note(damage)
            }
        }
        return scan
    }

    private func decodeChange(_ row: PostgresColumns, sequence: Int64, decoded: inout [RecordID: Record]) throws -> ChangeRow {
        try StoredColumns.decoding("change", key: "sequence \(sequence)") {
            let id = RecordID(recordName: try row.text(2, "name"), zoneID: ZoneID(zoneName: try row.text(1, "zone")))
            let kindNumber = try row.integer(4, "kind")
            guard let kind = ChangeRow.Kind(rawValue: Int(kindNumber)) else {
                throw StoredColumns.Mismatch(problem: "kind is \(kindNumber), which is no kind of change")
            }
            let type = try row.text(3, "type")
            let previous = row.isNull(5) ? nil : try row.fieldsText(5, "previous")
            var change = ChangeRow(
                sequence: sequence, recordID: id, recordType: type, kind: kind,
                previousFields: try ChangeRow.previousFields(previous, kind: kind, type: type, zone: id.zoneID, assets: assets),
                date: try row.date(6, "at"), current: nil)
            if !row.isNull(7) {
                let current = try decoded[id] ?? decodeRecord(row, from: 8, id: id, keys: nil)
                decoded[id] = current
                change.current = current
            }
            return change
        }
    }

    /// The newest change's sequence and how far the log was pruned, in one statement.
    func changeBounds() throws -> ChangeBounds {
        try Self.changeBounds(link.rows(Self.changeBoundsSQL).first)
    }

    private static let changeBoundsSQL = """
        SELECT (SELECT seq FROM fatchat.change ORDER BY seq DESC LIMIT 1) AS latest, (SELECT value FROM fatchat.meta WHERE key = 'pruned_through') AS pruned
        """

    /// The bounds from a row holding `changeBoundsSQL`'s two columns from column `first` on.
    private static func changeBounds(_ row: PostgresRow?, from first: Int = 0) throws -> ChangeBounds {
        let row = row.map(PostgresColumns.init)
        let pruned = try row.flatMap { $0.isNull(first + 1) ? nil : Int64(try $0.text(first + 1, "pruned_through")) } ?? 0
        return ChangeBounds(latest: try row.flatMap { $0.isNull(first) ? nil : try $0.integer(first, "seq") } ?? pruned, pruned: pruned)
    }

    /// Buffers the row: `sendBufferedWrites` sends a batch's rows in one INSERT, in this order.
    func appendChange(_ id: RecordID, type: String, kind: ChangeRow.Kind, previousFields: [String: FieldValue]?, date: Date) throws {
        buffer.changes.append(PostgresWriteBuffer.Change(
            zone: id.zoneID.zoneName, name: id.recordName, type: type, kind: Int64(kind.rawValue),
            previous: try previousFields.map(FieldCoding.encode), at: date.timeIntervalSince1970))
        if buffer.isFull { sendBufferedWrites() }
    }

    /// Every commit asks whether the log outgrew `keep`; the server answers and prunes without
    /// anyone waiting, so the writer holds the lock no longer for it. The question goes with
    /// the transaction's change-log rows where it can (`sendBufferedWrites`), sparing a round trip.
    func pruneChanges(keeping keep: Int) throws {
        buffer.keep = keep
    }

    /// The log pruned to its newest `$1` entries, as a statement of its own.
    enum Prune: PreparedSQL {
        static let name = "fatchat_prune"
        static let sql = "WITH " + cut(latest: "(SELECT seq FROM fatchat.change ORDER BY seq DESC LIMIT 1)", keep: "$1")

        static func binds(keep: Int) -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(Int64(keep))
            return binds
        }

        /// The end of a statement that deletes the entries up to `latest` less `keep`, and marks
        /// them pruned, unless the mark is there already. A mark that is not a number counts
        /// as 0, as `changeBounds` reads it, rather than failing the commit.
        static func cut(latest: String, keep: String) -> String {
            """
            cut AS (
                SELECT bound.cutoff FROM (SELECT \(latest) - \(keep) AS cutoff) bound
                JOIN fatchat.meta ON meta.key = 'pruned_through'
                    AND bound.cutoff > CASE WHEN meta.value ~ '^-?[0-9]{1,18}$' THEN meta.value::bigint ELSE 0 END
            ), pruned AS (
                DELETE FROM fatchat.change WHERE seq <= (SELECT cutoff FROM cut)
            )
            UPDATE fatchat.meta SET value = cut.cutoff::text FROM cut WHERE meta.key = 'pruned_through'
            """
        }
    }
}
