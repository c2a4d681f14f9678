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
///   sent without BEGIN or COMMIT.
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
        INSERT INTO fatchat.record (zone, name, type, fields, created, modified, creator, modifier, tag, search)
        SELECT z, n, t, f::jsonb, c, m, cr, mo, tg, CASE WHEN hs THEN array_to_tsvector(string_to_array(s, ' ')) END
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::float8[],
                    $7::text[], $8::text[], $9::text[], $10::text[], $11::boolean[]) AS u (z, n, t, f, c, m, cr, mo, tg, s, hs)
        ON CONFLICT (zone, name) DO UPDATE SET
            type = excluded.type, fields = excluded.fields, modified = excluded.modified,
            modifier = excluded.modifier, tag = excluded.tag, search = excluded.search\(returning ? "\nRETURNING 1" : "")
        """
    }

    /// How many parameters `beside` takes.
    static let besideParameters = 15

    /// A batch's references and asset uses, each hung off its record found by zone and name; its
    /// change-log rows, numbered in the order they were logged; and, when the last parameter is not
    /// NULL, the log pruned to that many newest entries. Its parameters are numbered from `first`.
    static func beside(parametersFrom first: Int) -> String {
        func p(_ n: Int) -> String { "$\(first + n - 1)" }
        return """
            WITH linked AS (
                INSERT INTO fatchat.reference (holder, zone, target, cascade)
                SELECT r.id, u.z, u.t, u.c FROM unnest(\(p(1))::text[], \(p(2))::text[], \(p(3))::text[], \(p(4))::boolean[]) AS u (z, n, t, c)
                JOIN fatchat.record r ON r.zone = u.z AND r.name = u.n
            ), used AS (
                INSERT INTO fatchat.asset_use (hash, record)
                SELECT u.h, r.id FROM unnest(\(p(5))::text[], \(p(6))::text[], \(p(7))::text[]) AS u (z, n, h)
                JOIN fatchat.record r ON r.zone = u.z AND r.name = u.n
            ), logged AS (
                INSERT INTO fatchat.change (zone, name, type, kind, previous, at)
                SELECT z, n, t, k::smallint, CASE WHEN hp THEN p END, a
                FROM unnest(\(p(8))::text[], \(p(9))::text[], \(p(10))::text[], \(p(11))::bigint[], \(p(12))::text[], \(p(13))::boolean[], \(p(14))::float8[])
                    WITH ORDINALITY AS u (z, n, t, k, p, hp, a, o)
                ORDER BY o
                RETURNING seq
            ), \(PostgresAccess.Prune.cut(latest: "(SELECT max(seq) FROM logged)", keep: p(15)))
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
    /// from the function's first parameters: that no record of zones `$1` and names `$2` exists;
    /// that every record of zones `$3` and names `$4` (references' targets) exists; and that the
    /// searchable keys of the types `$5` are the pairs of types `$6` and keys `$7`.
    static let guessChecks: String = {
        let stored = "SELECT type, key FROM fatchat.field_mark WHERE type = ANY($5) AND options & \(FieldIndexOptions.searchable.rawValue) <> 0"
        let guessed = "SELECT * FROM unnest($6, $7)"
        return """
            EXISTS (SELECT 1 FROM fatchat.record r JOIN unnest($1, $2) AS u (z, n) ON r.zone = u.z AND r.name = u.n)
                OR (SELECT count(*) FROM fatchat.record r JOIN unnest($3, $4) AS u (z, n) ON r.zone = u.z AND r.name = u.n) <> cardinality($3)
                OR EXISTS (\(stored) EXCEPT \(guessed)) OR EXISTS (\(guessed) EXCEPT \(stored))
            """
    }()

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
    static let saveGuessed = """
        CREATE OR REPLACE FUNCTION fatchat.save_guessed(text[], text[], text[], text[], text[], text[], text[], \(saveBatchParameters))
        RETURNS bigint LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
        BEGIN
            PERFORM pg_advisory_xact_lock(\(PostgresSchema.writeLock));
            IF \(guessChecks) THEN
                RAISE EXCEPTION 'the saves were made on a guess about stored records that does not hold' USING ERRCODE = '\(guessFailed)';
            END IF;
            RETURN fatchat.save_batch(\((guessParameters + 1...guessParameters + recordParameters + besideParameters).map { "$\($0)" }.joined(separator: ", ")));
        END $fn$
        """
}
