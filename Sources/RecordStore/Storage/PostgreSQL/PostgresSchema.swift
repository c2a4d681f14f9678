import Foundation
import PostgresNIO

/// The tables, row-level security, triggers and functions of a `postgresql` container, in the schema `fatchat`.
///
/// The role that creates it (`fatchat init DIR --postgres URL`) owns the tables
/// and the `SECURITY DEFINER` functions; it is the administrator, and as owner
/// it is not bound by the policies. Every other role is:
/// - a record row belongs to the role that inserted it (`owner`, set by a
///   trigger from `current_user`, whatever the client sent; only the
///   administrator migrating a container, `fatchat.migrating` on, inserts rows
///   for the role their creator names), and only that role
///   may update or delete it; its `creator` must be a user record name of that
///   role's name (`_<uid>_<role>`), so no one can post as someone else;
/// - references, asset uses and change-log entries can be written only for
///   one's own records (a delete entry only once the record is gone);
/// - what must reach other roles' rows goes through functions that check their
///   arguments: the cascade of a `deleteSelf` reference (only for a record
///   whose target is gone), field marks and their indexes (identifiers only),
///   search text, and the subscriptions of deleted parents;
/// - a public key (`identity`) is a row of the role its account names, and only
///   that role replaces it, as a subscription is;
/// - an asset's content is a row named by its SHA-256, which the server
///   recomputes, so anyone may add one and nobody can plant wrong content;
///   it goes once no record uses it.
/// Each insert into the change log sends `NOTIFY fatchat_changes` with the new
/// sequence number, delivered when the transaction commits, unless the
/// transaction is quiet (`fatchat.quiet` on: see `notifyChange`).
enum PostgresSchema {
    /// The version `meta.schema` holds; a database with a larger one was made by a newer build.
    /// Version 2 added the functions a commit calls (`PostgresWriteSQL`) and the feed's
    /// (`PostgresAccess.feedFunction`), and made `writerOf` cheap. Version 3 added the function that
    /// saves a batch of new records on a guess, in one statement (`PostgresWriteSQL.saveGuessed`).
    /// Version 4 made that function run only what new records need, in place of `save_batch`.
    /// Version 5 lets a quiet commit notify no one (`notifyChange`).
    static let version = 5
    /// The channel that carries each commit's newest sequence number.
    static let channel = "fatchat_changes"
    /// The advisory lock every writer holds until it commits, so that change sequences commit in order.
    static let writeLock: Int64 = 0x6661_7463_6861_74
    /// `writeLock` bound as the one parameter of `pg_advisory_xact_lock($1)`.
    static var writeLockBinds: PostgresBindings {
        var binds = PostgresBindings()
        binds.append(writeLock)
        return binds
    }

    /// Creates everything in one transaction; `databaseID` becomes the container's change-token identity.
    static func statements(databaseID: String, now: Double) -> [(sql: String, binds: [String])] {
        [
            ("CREATE SCHEMA fatchat", []),
            ("CREATE TABLE fatchat.meta (key text PRIMARY KEY, value text NOT NULL)", []),
            ("INSERT INTO fatchat.meta (key, value) VALUES ('schema', '\(version)'), ('pruned_through', '0'), ('database_id', $1)", [databaseID]),
            ("CREATE TABLE fatchat.zone (name text PRIMARY KEY, created double precision NOT NULL, changes boolean NOT NULL DEFAULT true)", []),
            ("INSERT INTO fatchat.zone (name, created) VALUES ($1, $2::double precision)", [ZoneID.defaultZoneName, String(now)]),
            ("""
             CREATE TABLE fatchat.record (
                 id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                 zone text NOT NULL, name text NOT NULL, type text NOT NULL,
                 fields jsonb NOT NULL CHECK (jsonb_typeof(fields) = 'object'),
                 created double precision NOT NULL, modified double precision NOT NULL,
                 creator text NOT NULL, modifier text NOT NULL, tag text NOT NULL,
                 owner name NOT NULL DEFAULT current_user,
                 search tsvector,
                 UNIQUE (zone, name))
             """, []),
            ("CREATE INDEX record_by_type_created ON fatchat.record (type, created, id)", []),
            ("CREATE INDEX record_by_type_modified ON fatchat.record (type, modified, id)", []),
            ("CREATE INDEX record_search ON fatchat.record USING gin (search)", []),
            ("""
             CREATE TABLE fatchat.reference (
                 holder bigint NOT NULL REFERENCES fatchat.record (id) ON DELETE CASCADE,
                 zone text NOT NULL, target text NOT NULL, cascade boolean NOT NULL)
             """, []),
            ("CREATE INDEX reference_by_target ON fatchat.reference (zone, target)", []),
            ("CREATE INDEX reference_by_holder ON fatchat.reference (holder)", []),
            ("""
             CREATE TABLE fatchat.asset_use (
                 hash text NOT NULL, record bigint NOT NULL REFERENCES fatchat.record (id) ON DELETE CASCADE,
                 PRIMARY KEY (hash, record))
             """, []),
            ("CREATE INDEX asset_use_by_record ON fatchat.asset_use (record)", []),
            ("""
             CREATE TABLE fatchat.change (
                 seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                 zone text NOT NULL, name text NOT NULL, type text NOT NULL,
                 kind smallint NOT NULL CHECK (kind IN (0, 1, 2)), previous text, at double precision NOT NULL,
                 author name NOT NULL DEFAULT current_user)
             """, []),
            ("CREATE INDEX change_by_zone ON fatchat.change (zone, seq)", []),
            ("CREATE TABLE fatchat.field_mark (type text NOT NULL, key text NOT NULL, options integer NOT NULL, PRIMARY KEY (type, key))", []),
            ("""
             CREATE TABLE fatchat.subscription (
                 owner text NOT NULL, id text NOT NULL, body text NOT NULL,
                 parent_zone text, parent_name text, parent_created double precision,
                 role name NOT NULL DEFAULT current_user,
                 PRIMARY KEY (owner, id))
             """, []),
            ("CREATE INDEX subscription_by_parent ON fatchat.subscription (parent_zone, parent_name)", []),

            // Who wrote a row is the server's word, never the client's.
            ("""
             CREATE FUNCTION fatchat.check_user(p_user text, p_role name) RETURNS void LANGUAGE plpgsql AS $$
             BEGIN
                 IF p_user !~ '^_[0-9]+_' OR right(p_user, length(p_role) + 1) <> '_' || p_role THEN
                     RAISE EXCEPTION 'the user % is not the role %', p_user, p_role USING ERRCODE = '42501';
                 END IF;
             END $$
             """, []),
            // The schema's owner (or a superuser) is the administrator: it is above row-level security already.
            ("""
             CREATE FUNCTION fatchat.is_administrator() RETURNS boolean LANGUAGE sql STABLE AS $$
                 SELECT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = 'fatchat.record'::regclass AND pg_has_role(current_user, c.relowner, 'MEMBER'))
                     OR EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user AND rolsuper)
             $$
             """, []),
            (writerOf, []),
            ("""
             CREATE FUNCTION fatchat.stamp_owner() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN
                 IF TG_OP = 'INSERT' THEN
                     NEW.owner := fatchat.writer_of(NEW.creator);
                 ELSE
                     NEW.owner := OLD.owner;
                     IF NEW.creator <> OLD.creator THEN
                         RAISE EXCEPTION 'a record''s creator never changes' USING ERRCODE = '42501';
                     END IF;
                 END IF;
                 PERFORM fatchat.check_user(NEW.creator, NEW.owner);
                 RETURN NEW;
             END $$
             """, []),
            ("CREATE TRIGGER record_owner BEFORE INSERT OR UPDATE ON fatchat.record FOR EACH ROW EXECUTE FUNCTION fatchat.stamp_owner()", []),
            ("""
             CREATE FUNCTION fatchat.stamp_author() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN NEW.author := current_user; RETURN NEW; END $$
             """, []),
            ("CREATE TRIGGER change_author BEFORE INSERT ON fatchat.change FOR EACH ROW EXECUTE FUNCTION fatchat.stamp_author()", []),
            (notifyChange, []),
            ("""
             CREATE TRIGGER change_notify AFTER INSERT ON fatchat.change REFERENCING NEW TABLE AS inserted
             FOR EACH STATEMENT EXECUTE FUNCTION fatchat.notify_change()
             """, []),

            // Row-level security. The policies' subqueries live in functions, so no column name can be read against the wrong table.
            ("""
             CREATE FUNCTION fatchat.owns(p_record bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
                 SELECT EXISTS (SELECT 1 FROM fatchat.record r WHERE r.id = p_record AND r.owner = current_user)
             $$
             """, []),
            ("""
             CREATE FUNCTION fatchat.may_log(p_zone text, p_name text, p_kind smallint) RETURNS boolean LANGUAGE sql STABLE AS $$
                 SELECT CASE WHEN p_kind = 2
                     THEN NOT EXISTS (SELECT 1 FROM fatchat.record r WHERE r.zone = p_zone AND r.name = p_name)
                     ELSE EXISTS (SELECT 1 FROM fatchat.record r WHERE r.zone = p_zone AND r.name = p_name AND r.owner = current_user)
                 END
             $$
             """, []),
            ("ALTER TABLE fatchat.record ENABLE ROW LEVEL SECURITY", []),
            ("CREATE POLICY record_read ON fatchat.record FOR SELECT USING (true)", []),
            ("CREATE POLICY record_insert ON fatchat.record FOR INSERT WITH CHECK (owner = current_user)", []),
            ("CREATE POLICY record_update ON fatchat.record FOR UPDATE USING (owner = current_user) WITH CHECK (owner = current_user)", []),
            ("CREATE POLICY record_delete ON fatchat.record FOR DELETE USING (owner = current_user)", []),
            ("ALTER TABLE fatchat.reference ENABLE ROW LEVEL SECURITY", []),
            ("CREATE POLICY reference_read ON fatchat.reference FOR SELECT USING (true)", []),
            ("CREATE POLICY reference_write ON fatchat.reference FOR ALL USING (fatchat.owns(holder)) WITH CHECK (fatchat.owns(holder))", []),
            ("ALTER TABLE fatchat.asset_use ENABLE ROW LEVEL SECURITY", []),
            ("CREATE POLICY asset_use_read ON fatchat.asset_use FOR SELECT USING (true)", []),
            ("CREATE POLICY asset_use_write ON fatchat.asset_use FOR ALL USING (fatchat.owns(record)) WITH CHECK (fatchat.owns(record))", []),
            ("ALTER TABLE fatchat.change ENABLE ROW LEVEL SECURITY", []),
            ("CREATE POLICY change_read ON fatchat.change FOR SELECT USING (true)", []),
            ("CREATE POLICY change_insert ON fatchat.change FOR INSERT WITH CHECK (fatchat.may_log(zone, name, kind))", []),
            // Pruning keeps the newest entries; any member may prune, as any member's client does.
            ("CREATE POLICY change_prune ON fatchat.change FOR DELETE USING (true)", []),
            ("ALTER TABLE fatchat.meta ENABLE ROW LEVEL SECURITY", []),
            ("CREATE POLICY meta_read ON fatchat.meta FOR SELECT USING (true)", []),
            ("CREATE POLICY meta_prune ON fatchat.meta FOR UPDATE USING (key = 'pruned_through') WITH CHECK (key = 'pruned_through')", []),
            ("ALTER TABLE fatchat.zone ENABLE ROW LEVEL SECURITY", []),
            ("CREATE POLICY zone_read ON fatchat.zone FOR SELECT USING (true)", []),
            ("ALTER TABLE fatchat.field_mark ENABLE ROW LEVEL SECURITY", []),
            ("CREATE POLICY field_mark_read ON fatchat.field_mark FOR SELECT USING (true)", []),
            ("ALTER TABLE fatchat.subscription ENABLE ROW LEVEL SECURITY", []),
            ("CREATE POLICY subscription_read ON fatchat.subscription FOR SELECT USING (true)", []),
            ("""
             CREATE POLICY subscription_write ON fatchat.subscription FOR ALL
             USING (role = current_user) WITH CHECK (role = current_user)
             """, []),
            // The role column of a subscription or a key: the server's word; the account the row names must be that role's.
            ("""
             CREATE FUNCTION fatchat.stamp_role() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN
                 IF TG_OP = 'INSERT' THEN NEW.role := fatchat.writer_of(to_jsonb(NEW) ->> TG_ARGV[0]); ELSE NEW.role := OLD.role; END IF;
                 PERFORM fatchat.check_user(to_jsonb(NEW) ->> TG_ARGV[0], NEW.role);
                 RETURN NEW;
             END $$
             """, []),
            ("CREATE TRIGGER subscription_role BEFORE INSERT OR UPDATE ON fatchat.subscription FOR EACH ROW EXECUTE FUNCTION fatchat.stamp_role('owner')", []),

            // What reaches other roles' rows, each with its own check.
            ("""
             CREATE FUNCTION fatchat.remove_orphan(p_zone text, p_name text) RETURNS bigint
             LANGUAGE sql SECURITY DEFINER SET search_path = fatchat, pg_temp AS $$
                 DELETE FROM fatchat.record c WHERE c.zone = p_zone AND c.name = p_name
                 AND EXISTS (SELECT 1 FROM fatchat.reference f WHERE f.holder = c.id AND f.cascade
                             AND NOT EXISTS (SELECT 1 FROM fatchat.record t WHERE t.zone = f.zone AND t.name = f.target))
                 RETURNING c.id
             $$
             """, []),
            ("""
             CREATE FUNCTION fatchat.drop_orphan_subscriptions(p_zone text, p_name text) RETURNS void
             LANGUAGE sql SECURITY DEFINER SET search_path = fatchat, pg_temp AS $$
                 DELETE FROM fatchat.subscription s WHERE s.parent_zone = p_zone AND s.parent_name = p_name
                 AND NOT EXISTS (SELECT 1 FROM fatchat.record r WHERE r.zone = p_zone AND r.name = p_name)
             $$
             """, []),
            ("""
             CREATE FUNCTION fatchat.set_search(p_id bigint, p_tokens text[]) RETURNS void
             LANGUAGE sql SECURITY DEFINER SET search_path = fatchat, pg_temp AS $$
                 UPDATE fatchat.record SET search = CASE WHEN p_tokens IS NULL THEN NULL ELSE array_to_tsvector(p_tokens) END WHERE id = p_id
             $$
             """, []),
            ("""
             CREATE FUNCTION fatchat.set_field_mark(p_type text, p_key text, p_options integer) RETURNS void
             LANGUAGE plpgsql SECURITY DEFINER SET search_path = fatchat, pg_temp AS $$
             DECLARE
                 suffix text := left(md5(p_type || '.' || p_key), 20);
                 kinds text[] := ARRAY['q', 's'];
                 definitions text[] := ARRAY['(fields -> %L -> ''v''), created, id', '(fields -> %L -> ''v'') NULLS FIRST, id'];
             BEGIN
                 IF p_type !~ '^[A-Za-z0-9_]+$' OR p_key !~ '^[A-Za-z0-9_]+$' THEN
                     RAISE EXCEPTION 'a record type and a field key are letters, digits and _' USING ERRCODE = '22023';
                 END IF;
                 IF p_options = 0 THEN
                     DELETE FROM fatchat.field_mark WHERE type = p_type AND key = p_key;
                 ELSE
                     INSERT INTO fatchat.field_mark (type, key, options) VALUES (p_type, p_key, p_options)
                     ON CONFLICT (type, key) DO UPDATE SET options = excluded.options;
                 END IF;
                 -- Bit 1 (queryable) and bit 2 (sortable) each have an index of their own.
                 FOR i IN 1..2 LOOP
                     IF p_options & (1 << (i - 1)) <> 0 THEN
                         EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON fatchat.record (' || definitions[i] || ') WHERE type = %L',
                                        'record_' || kinds[i] || '_' || suffix, p_key, p_type);
                     ELSE
                         EXECUTE format('DROP INDEX IF EXISTS fatchat.%I', 'record_' || kinds[i] || '_' || suffix);
                     END IF;
                 END LOOP;
             END $$
             """, []),
            // Public keys: one row per account, owned by the role whose name the account carries.
            ("""
             CREATE TABLE fatchat.identity (
                 account text PRIMARY KEY, key text NOT NULL CHECK (octet_length(key) <= 1024),
                 published double precision NOT NULL, role name NOT NULL DEFAULT current_user)
             """, []),
            ("CREATE TRIGGER identity_role BEFORE INSERT OR UPDATE ON fatchat.identity FOR EACH ROW EXECUTE FUNCTION fatchat.stamp_role('account')", []),
            ("ALTER TABLE fatchat.identity ENABLE ROW LEVEL SECURITY", []),
            ("CREATE POLICY identity_read ON fatchat.identity FOR SELECT USING (true)", []),
            ("CREATE POLICY identity_insert ON fatchat.identity FOR INSERT WITH CHECK (role = current_user)", []),
            ("CREATE POLICY identity_update ON fatchat.identity FOR UPDATE USING (role = current_user) WITH CHECK (role = current_user)", []),
            // Assets: one row per content, named by its SHA-256, which the server checks; removed once no record uses it.
            ("""
             CREATE TABLE fatchat.asset (
                 hash text PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'), content bytea NOT NULL,
                 CHECK (encode(sha256(content), 'hex') = hash))
             """, []),
            ("ALTER TABLE fatchat.asset ENABLE ROW LEVEL SECURITY", []),
            ("CREATE POLICY asset_read ON fatchat.asset FOR SELECT USING (true)", []),
            ("CREATE POLICY asset_insert ON fatchat.asset FOR INSERT WITH CHECK (true)", []),
            ("""
             CREATE FUNCTION fatchat.drop_unused_asset(p_hash text) RETURNS void
             LANGUAGE sql SECURITY DEFINER SET search_path = fatchat, pg_temp AS $$
                 DELETE FROM fatchat.asset a WHERE a.hash = p_hash AND NOT EXISTS (SELECT 1 FROM fatchat.asset_use u WHERE u.hash = p_hash)
             $$
             """, []),
            ("GRANT USAGE ON SCHEMA fatchat TO PUBLIC", []),
            ("GRANT SELECT ON ALL TABLES IN SCHEMA fatchat TO PUBLIC", []),
            ("GRANT INSERT, UPDATE, DELETE ON fatchat.record, fatchat.reference, fatchat.asset_use, fatchat.change, fatchat.subscription TO PUBLIC", []),
            ("GRANT UPDATE ON fatchat.meta TO PUBLIC", []),
            ("GRANT INSERT, UPDATE ON fatchat.identity TO PUBLIC", []),
            ("GRANT INSERT ON fatchat.asset TO PUBLIC", []),
        ] + (PostgresWriteSQL.functions + [PostgresAccess.feedFunction, PostgresWriteSQL.saveGuessed]).map { ($0, []) }
    }

    /// Whose row an insert makes: the inserting role's, except while the administrator migrates a
    /// container (`fatchat.migrating` set in its transaction), when it is the role the row's account
    /// names. Every record insert asks, through its trigger. An unset `fatchat.migrating` reads as
    /// NULL, and `NULL AND x` must evaluate `x`; so schema 1, without the `coalesce`, looked the
    /// administrator up in `pg_class` and `pg_roles` at every insert, 0.15–0.3 ms of a commit.
    static let writerOf = """
        CREATE OR REPLACE FUNCTION fatchat.writer_of(p_user text) RETURNS name LANGUAGE sql STABLE AS $$
            SELECT CASE WHEN coalesce(current_setting('fatchat.migrating', true), '') = 'on' AND fatchat.is_administrator()
                   THEN coalesce(substring(p_user from '^_[0-9]+_(.+)$')::name, current_user) ELSE current_user END
        $$
        """

    /// The change log's trigger function: notifies the channel of a commit's newest sequence number,
    /// unless the transaction set `fatchat.quiet` on (`QuietCommits`: a presence heartbeat). Listeners
    /// then read that commit at their next fetch, within `PostgresChangeSignal.pollInterval`, instead
    /// of each fetching it at once. Any role may make its own commits quiet; that only delays others'
    /// reading of them, which a writer could do anyway by committing later.
    static let notifyChange = """
        CREATE OR REPLACE FUNCTION fatchat.notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF coalesce(current_setting('fatchat.quiet', true), '') <> 'on' THEN
                PERFORM pg_notify('\(channel)', (SELECT max(seq) FROM inserted)::text);
            END IF;
            RETURN NULL;
        END $$
        """

    /// What brings a database of schema `version` up to this build's, run in one transaction by its administrator.
    static func upgrade(from version: Int) -> [(sql: String, binds: [String])] {
        var statements: [(sql: String, binds: [String])] = []
        if version < 2 { statements += ([writerOf, PostgresAccess.feedFunction] + PostgresWriteSQL.functions).map { ($0, []) } }
        if version < 4 { statements.append((PostgresWriteSQL.saveGuessed, [])) }
        if version < 5 { statements.append((notifyChange, [])) }
        statements.append(("UPDATE fatchat.meta SET value = $1 WHERE key = 'schema'", [String(Self.version)]))
        return statements
    }
}
