import Foundation

/// The SQL of a commit's look-up and saves: sent as statements of their own to a database of
/// schema 1, and held in functions of the schema since version 2, so that a commit costs fewer
/// round trips (postgres-nio sends a statement only once the one before it is answered).
///
/// - `fatchat.look_up_locked` takes the write lock, then looks up: one round trip where two were.
///   The look-up is a statement of its own inside the function, so its snapshot is taken once
///   the lock is held and sees the commit of the writer before.
/// - `fatchat.save_batch` runs the records' INSERT, then what hangs off them: one round trip
///   where two were. They cannot be one statement: the row-level-security checks of references
///   and change-log rows read `fatchat.record`, and a statement does not see its own inserts.
///
/// - `fatchat.save_guessed` (schema 3) takes the write lock, checks what the client guessed instead of
///   looking up (`guessChecks`), and saves the batch: a new message's whole commit in one statement,
///   sent without BEGIN or COMMIT. Since schema 4 it saves with statements of its own (`saveGuessed`).
///
/// All run as the calling role (`SECURITY INVOKER`), so row-level security binds them as it binds
/// the statements. Both plan their statements once per session (`force_generic_plan`): left to
/// choose, the server found a plan for arrays of known length cheaper than a generic one, and
/// planned the statements again at every call: the look-up took 0.29 ms a call against 0.08 ms
/// planned once, and the save 1.56 ms against 0.80 ms (`pgbench -M prepared -r`).
enum PostgresWriteSQL {
    /// The records as stored, and which of them exist, for zones `$1` and names `$2` side by side;
    /// then the field marks of the types in `$3`, in rows of their own whose zone is NULL.
    static let lookUp = """
        SELECT r.zone, r.name, \(PostgresAccess.recordColumns(of: "r")), NULL AS mark_type, NULL AS mark_key, NULL::integer AS mark_options
        FROM fatchat.record r
        JOIN unnest($1::text[], $2::text[]) AS w (zone, name)
        ON r.zone = w.zone AND r.name = w.name
        UNION ALL
        SELECT NULL, NULL, \(Array(repeating: "NULL", count: PostgresAccess.recordColumnCount).joined(separator: ", ")), m.type, m.key, m.options
        FROM fatchat.field_mark m WHERE m.type = ANY($3::text[])
        """

    /// Where a mark's type, key and options begin in a row of `lookUp`.
    static let marksColumn = 2 + PostgresAccess.recordColumnCount

    /// How many parameters `records` takes.
    static let recordParameters = 12

    /// The parameters of a statement numbered from `first`: `parameter(1)` is `$first`.
    private static func parameters(from first: Int) -> (Int) -> String {
        { "$\(first + $0 - 1)" }
    }

    /// A batch's records in one INSERT, each a new row or an update of its creator's own. A replaced
    /// record's references and asset uses go first; `beside` puts back the ones it has now.
    static func records(returning: Bool) -> String {
        """
        WITH replaced AS (
            SELECT r.id FROM fatchat.record r JOIN unnest($1::text[], $2::text[], $12::boolean[]) AS u (z, n, isnew)
            ON r.zone = u.z AND r.name = u.n WHERE NOT u.isnew
        ), unlinked AS (
            DELETE FROM fatchat.reference WHERE holder IN (SELECT id FROM replaced)
        ), unused AS (
            DELETE FROM fatchat.asset_use WHERE record IN (SELECT id FROM replaced)
        )
        \(insertRecords(parametersFrom: 1))
        ON CONFLICT (zone, name) DO UPDATE SET
            type = excluded.type, fields = excluded.fields, modified = excluded.modified,
            modifier = excluded.modifier, tag = excluded.tag, search = excluded.search\(returning ? "\nRETURNING 1" : "")
        """
    }

    /// The INSERT of a batch's records from the first 11 parameters of `records`, numbered from `first`.
    private static func insertRecords(parametersFrom first: Int) -> String {
        let p = parameters(from: first)
        return """
            INSERT INTO fatchat.record (zone, name, type, fields, created, modified, creator, modifier, tag, search)
            SELECT z, n, t, f::jsonb, c, m, cr, mo, tg, CASE WHEN hs THEN array_to_tsvector(string_to_array(s, ' ')) END
            FROM unnest(\(p(1))::text[], \(p(2))::text[], \(p(3))::text[], \(p(4))::text[], \(p(5))::float8[], \(p(6))::float8[],
                        \(p(7))::text[], \(p(8))::text[], \(p(9))::text[], \(p(10))::text[], \(p(11))::boolean[]) AS u (z, n, t, f, c, m, cr, mo, tg, s, hs)
            """
    }

    /// How many parameters `beside` takes.
    static let besideParameters = 15

    /// A batch's references and asset uses, each hung off its record found by zone and name; its
    /// change-log rows, numbered in the order they were logged; and, when the last parameter is not
    /// NULL, the log pruned to that many newest entries. Its parameters are numbered from `first`.
    static func beside(parametersFrom first: Int) -> String {
        """
        WITH linked AS (
            \(insertReferences(parametersFrom: first))
        ), used AS (
            \(insertAssetUses(parametersFrom: first + 4))
        ), \(logged(parametersFrom: first + 7))
        """
    }

    /// The references of `beside`'s first 4 parameters, numbered from `first`.
    private static func insertReferences(parametersFrom first: Int) -> String {
        let p = parameters(from: first)
        return """
            INSERT INTO fatchat.reference (holder, zone, target, cascade)
            SELECT r.id, u.z, u.t, u.c FROM unnest(\(p(1))::text[], \(p(2))::text[], \(p(3))::text[], \(p(4))::boolean[]) AS u (z, n, t, c)
            JOIN fatchat.record r ON r.zone = u.z AND r.name = u.n
            """
    }

    /// The asset uses of `beside`'s parameters 5 to 7, numbered from `first`.
    private static func insertAssetUses(parametersFrom first: Int) -> String {
        let p = parameters(from: first)
        return """
            INSERT INTO fatchat.asset_use (hash, record)
            SELECT u.h, r.id FROM unnest(\(p(1))::text[], \(p(2))::text[], \(p(3))::text[]) AS u (z, n, h)
            JOIN fatchat.record r ON r.zone = u.z AND r.name = u.n
            """
    }

    /// The change-log rows and the prune of `beside`'s last 8 parameters, numbered from `first`, as
    /// the tail of a statement's WITH.
    private static func logged(parametersFrom first: Int) -> String {
        let p = parameters(from: first)
        return """
            logged AS (
                INSERT INTO fatchat.change (zone, name, type, kind, previous, at)
                SELECT z, n, t, k::smallint, CASE WHEN hp THEN p END, a
                FROM unnest(\(p(1))::text[], \(p(2))::text[], \(p(3))::text[], \(p(4))::bigint[], \(p(5))::text[], \(p(6))::boolean[], \(p(7))::float8[])
                    WITH ORDINALITY AS u (z, n, t, k, p, hp, a, o)
                ORDER BY o
                RETURNING seq
            ), \(PostgresAccess.Prune.cut(latest: "(SELECT max(seq) FROM logged)", keep: p(8)))
            """
    }

    /// The parameters of `records`, then those of `beside`, as `fatchat.save_batch` takes them.
    private static let saveBatchParameters = """
        text[], text[], text[], text[], float8[], float8[], text[], text[], text[], text[], boolean[], boolean[],
        text[], text[], text[], boolean[], text[], text[], text[], text[], text[], text[], bigint[], text[], boolean[], float8[], bigint
        """

    /// The SQLSTATE `fatchat.save_guessed` raises when the client's guess was wrong: nothing is saved, and the client looks up and tries again.
    static let guessFailed = "FC001"

    /// What a client that did not look up before saving guessed, checked once the write lock is held,
    /// from the function's first parameters: that every record of zones `$3` and names `$4`
    /// (references' targets) exists, and that the searchable keys of the types `$5` are the pairs of
    /// types `$6` and keys `$7` (a pair on one side only leaves the other side's columns NULL in the
    /// full join). That no record of zones `$1` and names `$2` exists is checked by the INSERT itself
    /// (`saveGuessed`), which saves no record in place of one stored.
    static let guessChecks = """
        (SELECT count(*) FROM fatchat.record r JOIN unnest($3, $4) AS u (z, n) ON r.zone = u.z AND r.name = u.n) <> cardinality($3)
            OR (SELECT bool_or(s.type IS NULL OR g.type IS NULL)
                FROM (SELECT type, key FROM fatchat.field_mark WHERE type = ANY($5) AND options & \(FieldIndexOptions.searchable.rawValue) <> 0) s
                FULL JOIN unnest($6, $7) AS g (type, key) ON s.type = g.type AND s.key = g.key)
        """

    /// How many parameters `guessChecks` takes, before `fatchat.save_batch`'s.
    static let guessParameters = 7

    /// The functions schema 2 adds, made by a new database and by the upgrade of a schema-1 one.
    static let functions = [
        """
        CREATE OR REPLACE FUNCTION fatchat.look_up_locked(text[], text[], text[])
        RETURNS TABLE (o_zone text, o_name text, o_type text, o_fields text, o_created double precision, o_modified double precision,
                       o_creator text, o_modifier text, o_tag text, o_mark_type text, o_mark_key text, o_mark_options integer)
        LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
        BEGIN
            PERFORM pg_advisory_xact_lock(\(PostgresSchema.writeLock));
            RETURN QUERY \(lookUp);
        END $fn$
        """,
        """
        CREATE OR REPLACE FUNCTION fatchat.save_batch(\(saveBatchParameters))
        RETURNS bigint LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
        DECLARE
            saved bigint;
        BEGIN
            \(records(returning: false));
            GET DIAGNOSTICS saved = ROW_COUNT;
            \(beside(parametersFrom: recordParameters + 1));
            RETURN saved;
        END $fn$
        """,
    ]

    /// The function schema 3 adds: a batch saved on a guess, which it checks under the write lock.
    ///
    /// Since schema 4 it does not call `fatchat.save_batch`, and runs only what a batch of new records
    /// needs: no replaced record's references to remove, and no statement for references or asset uses
    /// when there are none. An INSERT that skips a name already stored (or named twice in the batch)
    /// stands for the look-up that would have found it. Each statement a call runs is set up anew by
    /// the server at every call, which was a third of its work (`BENCHMARKS.md`, nineteenth round).
    static let saveGuessed: String = {
        let p = parameters(from: guessParameters + 1)
        let refused = "RAISE EXCEPTION 'the saves were made on a guess about stored records that does not hold' USING ERRCODE = '\(guessFailed)'"
        return """
            CREATE OR REPLACE FUNCTION fatchat.save_guessed(text[], text[], text[], text[], text[], text[], text[], \(saveBatchParameters))
            RETURNS bigint LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
            DECLARE
                saved bigint;
            BEGIN
                PERFORM pg_advisory_xact_lock(\(PostgresSchema.writeLock));
                IF \(guessChecks) THEN
                    \(refused);
                END IF;
                \(insertRecords(parametersFrom: guessParameters + 1)) ON CONFLICT (zone, name) DO NOTHING;
                GET DIAGNOSTICS saved = ROW_COUNT;
                IF saved <> cardinality(\(p(1))) THEN
                    \(refused);
                END IF;
                IF cardinality(\(p(recordParameters + 1))) > 0 THEN
                    \(insertReferences(parametersFrom: guessParameters + recordParameters + 1));
                END IF;
                IF cardinality(\(p(recordParameters + 5))) > 0 THEN
                    \(insertAssetUses(parametersFrom: guessParameters + recordParameters + 5));
                END IF;
                WITH \(logged(parametersFrom: guessParameters + recordParameters + 8));
                RETURN saved;
            END $fn$
            """
    }()
}
