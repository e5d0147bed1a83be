-- fencing--1.4--1.5.sql: upgrade of the fencing extension from 1.4 to 1.5.
-- Each change says what it gives a 1.4 install; a fresh 1.5 install gets
-- the same objects from src/sql/concepts/ (test 99_upgrade_objects).

\echo Use "ALTER EXTENSION fencing UPDATE TO '1.5'" to load this file. \quit

-- The event trigger no longer runs as the extension's owner: it runs as the
-- role whose CREATE TABLE or ALTER TABLE fired it, and the fence's triggers
-- are created as each table's owner (no DDL about a user's table runs with
-- another role's rights: a partition key's expression is the owner's code).
-- It is C, reads the commands it acts on from the server (no SQL function
-- takes one), and gives the TRUNCATE fence only to partitions the command
-- itself created or attached, so that a restore, which recreates each
-- partition's own trigger, finds none there already.
DROP FUNCTION fencing.protect_new_partitions(regclass);
CREATE OR REPLACE FUNCTION fencing.fence_new_partitions()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'fencing_fence_new_partitions'
LANGUAGE C;
REVOKE ALL ON FUNCTION fencing.fence_new_partitions() FROM PUBLIC;
COMMENT ON FUNCTION fencing.fence_new_partitions() IS
'Event trigger function: partitions created or attached below protected tables get the TRUNCATE fence trigger; altered protected tables are checked.';

-- Monitoring reads a scope's recent terms, and fencing.term_retention its
-- expired ones, as ranges of an index on (scope, issued_at): their cost no
-- longer grows with the scope's history (10_clock.sql).
CREATE INDEX terms_scope_issued_at ON fencing.terms (scope, issued_at);
COMMENT ON TABLE fencing.terms IS 'Every term issued, with its holder and time. Written only by the extension; old terms are deleted by fencing.prune_terms() and, when fencing.term_retention is set, as their scope is issued new ones.';

-- fencing.scope_stats reads a scope's last hour of terms as a range of that
-- index, and at most max(100000, fencing.flapping_terms_per_hour + 1) of it
-- (70_telemetry.sql): a tenant's history no longer costs every scrape.
CREATE OR REPLACE VIEW fencing.scope_stats AS
SELECT coalesce(s.scope, c.scope) AS scope,
       s.mark,
       s.epoch AS latest_term,
       s.holder AS latest_term_holder,
       s.epoch_issued_at AS latest_term_at,
       l.holder AS lease_holder,
       l.term AS lease_term,
       l.expires_at AS lease_expires_at,
       l.live AS lease_live,
       -- a holder that may still believe it leads: its lease neither
       -- released nor expired, but its term below the mark
       (l.released_at IS NULL
        AND l.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp()
        AND l.term OPERATOR(pg_catalog.<) s.mark) AS lease_fenced,
       CASE WHEN i.enabled THEN coalesce(c.rejected_stale, 0) END AS rejected_stale,
       CASE WHEN i.enabled THEN coalesce(c.rejected_missing, 0) END AS rejected_missing,
       CASE WHEN i.enabled THEN coalesce(c.rejected_not_issued, 0) END AS rejected_not_issued,
       CASE WHEN i.enabled THEN coalesce(c.rejected_conflict, 0) END AS rejected_conflict,
       CASE WHEN i.enabled THEN coalesce(c.skipped, 0) END AS skipped,
       CASE WHEN i.enabled THEN coalesce(c.bypassed, 0) END AS bypassed,
       CASE WHEN i.enabled THEN coalesce(c.terms_issued, 0) END AS terms_issued,
       CASE WHEN i.enabled THEN coalesce(c.lease_grants, 0) END AS lease_grants,
       CASE WHEN i.enabled THEN coalesce(c.lease_renewals_refused, 0) END AS lease_renewals_refused,
       CASE WHEN i.enabled THEN coalesce(c.lease_expiries, 0) END AS lease_expiries,
       h.terms_last_hour,
       h.terms_last_hour OPERATOR(pg_catalog.>) f.per_hour AS flapping,
       c.last_rejection_at,
       c.stats_since
FROM fencing.scopes s
FULL JOIN (SELECT sc.* FROM fencing.scope_counters() sc
            WHERE fencing.may_read(sc.scope)) c
       ON c.scope COLLATE "C" OPERATOR(pg_catalog.=) s.scope
LEFT JOIN fencing.lease_status l ON l.scope OPERATOR(pg_catalog.=) s.scope
CROSS JOIN fencing.stats_info() i
CROSS JOIN (SELECT coalesce(
                pg_catalog.current_setting('fencing.flapping_terms_per_hour', true),
                '30')::pg_catalog.int4 AS per_hour) f
-- the scope's last hour, a range of the index on (scope, issued_at), and
-- no more of it than tells flapping: at most max(100000, the threshold + 1)
-- entries, whatever a tenant issues
CROSS JOIN LATERAL (
    SELECT pg_catalog.count(*) AS terms_last_hour
      FROM (SELECT FROM fencing.terms t
             WHERE t.scope OPERATOR(pg_catalog.=) s.scope
               AND t.issued_at OPERATOR(pg_catalog.>)
                   (pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::pg_catalog.interval)
             LIMIT CASE WHEN f.per_hour OPERATOR(pg_catalog.<) 100000 THEN 100000
                        ELSE f.per_hour::pg_catalog.int8 OPERATOR(pg_catalog.+) 1 END) r) h;
COMMENT ON VIEW fencing.scope_stats IS
'Per scope: mark, latest term, lease (lease_fenced: a lease neither released nor expired whose term is below the mark: its holder may still believe it leads), counters of rejections by kind, skips, bypasses, terms, lease grants, refused renewals and expiries since the last reset (null when fencing is not in shared_preload_libraries), terms issued in the last hour (counted up to 100000, or to fencing.flapping_terms_per_hour + 1 when that is larger) and whether that is flapping (above fencing.flapping_terms_per_hour).';
DO $invoker$
BEGIN
    IF pg_catalog.current_setting('server_version_num')::pg_catalog.int4 OPERATOR(pg_catalog.>=) 150000 THEN
        ALTER VIEW fencing.scope_stats SET (security_invoker = true);
    END IF;
END
$invoker$;
-- Issue 31: no term is issued twice after pg_upgrade, a restore into a new
-- cluster or database, or a copy, and an asynchronous failover there.  The
-- band of terms carries the clock's generation (fencing.clock), which moves
-- above every band used whenever the server issuing a term is not the one
-- that claimed the clock; fencing.clock_state() shows it, confirm_clock()
-- confirms it after an unclean start, and health reports an unconfirmed
-- clock.  clock_timeline() reads fencing.clock now: not parallel safe.
-- The clock's generation: the band of timeline T is G + T - 1, for the
-- generation G kept here.  One row per claim (none before the first term),
-- inserted only by the extension, never updated: who issued in which band
-- (system identifier, database, this table's OID, timeline); the latest
-- claim is in force.  A term issued by any other server (after pg_upgrade,
-- a restore into a new cluster or database, a copy) or on a lower timeline
-- moves the generation above every band used and 16 timelines more, its
-- floor later by the time since the claim, in the issuing transaction
-- (src/clock/clock_generation.c).  Dumped, copied by pg_upgrade and
-- replicated with the data, so the generation only grows.
CREATE TABLE fencing.clock (
    generation        bigint NOT NULL CHECK (generation OPERATOR(pg_catalog.>=) 0),
    band_offset       bigint NOT NULL DEFAULT 0
                      CHECK (band_offset OPERATOR(pg_catalog.>=) 0
                             AND band_offset OPERATOR(pg_catalog.<) 1099511627776),
    system_identifier bigint NOT NULL,
    database_oid      oid NOT NULL,
    clock_oid         oid NOT NULL,
    timeline          bigint NOT NULL CHECK (timeline OPERATOR(pg_catalog.>=) 1),
    claimed_at        timestamptz NOT NULL,
    reason            text NOT NULL,
    confirmed_start   timestamptz
);
COMMENT ON TABLE fencing.clock IS 'The epoch clock''s generation and the server that claimed it: timeline T issues terms from (generation + T - 1) * 2^40 + band_offset, 2^40 of them. One row per claim (moves, promotions, confirmations), the latest in force; inserted only by the extension.';
SELECT pg_catalog.pg_extension_config_dump('fencing.clock', '');
REVOKE ALL ON fencing.clock FROM PUBLIC;
GRANT SELECT ON fencing.clock TO pg_monitor;

CREATE FUNCTION fencing.clock_state(OUT state text, OUT timeline bigint, OUT generation bigint,
                                    OUT band_offset bigint,
                                    OUT term_floor bigint, OUT term_limit bigint,
                                    OUT system_identifier bigint,
                                    OUT claimed_system_identifier bigint,
                                    OUT claimed_timeline bigint,
                                    OUT claimed_at timestamptz, OUT reason text)
RETURNS record
AS 'MODULE_PATHNAME', 'fencing_clock_state'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fencing.clock_state() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fencing.clock_state() TO pg_monitor;
COMMENT ON FUNCTION fencing.clock_state() IS
'The epoch clock as this server sees it, for superusers and pg_monitor. state: unclaimed (no term issued since 1.5), claimed (by this server on this timeline), new timeline (this server, promoted since), moves (claimed by another server, database or a higher timeline: the next term moves the generation), unconfirmed or awaits confirmation (the server started from a data directory not shut down cleanly, fencing.clock_unclean_start issue or confirm: fencing.confirm_clock()), awaits confirmation since a promotion (promoted since the server started, fencing.clock_promotion = confirm: fencing.confirm_clock()). generation, band_offset, term_floor, term_limit: the band the next term is issued in; claimed_*: who claimed the clock (fencing.clock).';

CREATE FUNCTION fencing.confirm_clock(lost_timelines integer DEFAULT 16)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_confirm_clock'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fencing.confirm_clock(integer) FROM PUBLIC;
COMMENT ON FUNCTION fencing.confirm_clock(integer) IS
'For a superuser, once no other copy of this database issues terms: moves the clock''s generation above every band a copy of this data directory could have used (on this timeline and up to lost_timelines above it) and confirms the clock for this start of the server (fencing.clock_unclean_start). Returns the floor of the new band. Durable.';

ALTER FUNCTION fencing.clock_timeline() PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.clock_timeline() IS
'The timeline of this server (the replayed one on a standby) and its band of terms in the clock''s generation (fencing.clock_state()): it issues terms term_floor to term_limit - 1 (the next timeline issues from term_limit on). A scope whose mark or latest term is at or above term_limit - 1 is outside the band: its next term would be term_limit or more, which an asynchronous failover could issue again, so fence_next_epoch() and lease grants refuse it (ZF007).';

-- The clock of an install updated in place was claimed by this server on
-- this timeline, unless terms above this timeline's band show that it was
-- moved here (pg_upgrade from 1.4, a restore): then no row, and the first
-- term moves the generation above every term known.
INSERT INTO fencing.clock (generation, system_identifier, database_oid, clock_oid, timeline,
                           claimed_at, reason)
SELECT 0, c.system_identifier, d.oid, 'fencing.clock'::pg_catalog.regclass::pg_catalog.oid,
       c.timeline, pg_catalog.clock_timestamp(), 'updated from 1.4'
  FROM fencing.clock_state() c, pg_catalog.pg_database d
 WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
   AND NOT EXISTS (SELECT 1 FROM fencing.scopes s
                    WHERE s.tokens OPERATOR(pg_catalog.=) 'issued'
                      AND s.epoch OPERATOR(pg_catalog.>=) (c.timeline OPERATOR(pg_catalog.*) 1099511627776))
   AND NOT EXISTS (SELECT 1 FROM fencing.terms t
                    WHERE t.epoch OPERATOR(pg_catalog.>=) (c.timeline OPERATOR(pg_catalog.*) 1099511627776));

-- Citus (issue 34): a node fed the coordinator's marks records that it is a
-- worker, for good (fencing.node_state), and a worker that missed feeds
-- while disabled or removed refuses writes by scope until it is fed again
-- (fencing.cluster_node_marks(), reported by fencing.health).
-- distribute_marks() refuses on a recorded worker and records the
-- coordinator.  A 1.4 cluster's nodes record their role here; its workers
-- have no placement recorded yet, so they refuse writes by scope until
-- the coordinator runs distribute_marks() (or feeds any change).
-- This node's part in a Citus cluster, recorded once it is known
-- (src/state/citus_shards.c reads it, src/marks/cluster_apply.c and
-- fencing.distribute_marks() write it): a node fed the coordinator's marks
-- is a worker for good, whatever Citus's metadata says later
-- (stop_metadata_sync_to_node() makes a worker's group 0): it never issues
-- terms or leases nor changes a mark by itself.  fed_via is the local
-- placement of fencing.cluster_marks through which the node last took every
-- scope: a node whose placement Citus dropped (disabled, removed) or
-- replaced (activated, added again: Citus copies the rows, firing no
-- trigger) has missed feeds, and refuses writes by scope until the
-- coordinator feeds it again.  fed_start is the start of the server that
-- recorded the row: with fencing.citus_worker_start = 'refuse' a worker
-- started since (maybe disabled while it was down) refuses them too.
CREATE TABLE fencing.node_state (
    only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    role        text NOT NULL CHECK (role OPERATOR(pg_catalog.=) ANY ('{coordinator,worker}'::text[])),
    fed_via     oid,
    recorded_at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    fed_start   timestamptz,
    lease       interval,
    lease_from  timestamptz,
    lease_offer uuid,
    lease_offered_at timestamptz
);
COMMENT ON TABLE fencing.node_state IS
'This node''s role in a Citus cluster (coordinator or worker), recorded when the coordinator first distributes or feeds its marks; a worker stays one whatever Citus''s metadata says later. fed_via: the local placement of fencing.cluster_marks through which a worker last took every scope (a placement Citus dropped or replaced since means missed feeds: writes by scope are refused). fed_start: the start of the server that recorded it (fencing.citus_worker_start = refuse: a worker started since refuses writes by scope until fed again). lease, lease_from: the feed lease from the coordinator (NULL: none), which runs out at lease_from + lease on this node''s clock (writes by scope are refused from then); lease_offer, lease_offered_at: the offer the next renewal may acknowledge. Written only by the extension.';
SELECT pg_catalog.pg_extension_config_dump('fencing.node_state', '');
REVOKE ALL ON fencing.node_state FROM PUBLIC;

CREATE FUNCTION fencing.cluster_node_marks()
RETURNS text
AS 'MODULE_PATHNAME', 'fencing_cluster_node_marks'
LANGUAGE C STABLE;
REVOKE ALL ON FUNCTION fencing.cluster_node_marks() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fencing.cluster_node_marks() TO pg_monitor;
COMMENT ON FUNCTION fencing.cluster_node_marks() IS
'On a Citus worker whose marks the coordinator distributes: why the node''s marks are not current (it missed feeds while disabled or removed, or was never fed), in which case it refuses every write by scope; NULL when they are current, and on any other node. fencing.health reports it.';

-- The guard of the coordinator's cluster functions (distribute_marks(), the
-- feed lease's): Citus is installed in this database, and this node is its
-- coordinator (group 0, and never fed as a worker).
CREATE FUNCTION fencing.require_citus_coordinator(caller text, hint text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'citus') THEN
        RAISE EXCEPTION '% needs the citus extension in this database', caller
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = hint;
    END IF;
    IF (SELECT groupid FROM pg_catalog.pg_dist_local_group) OPERATOR(pg_catalog.<>) 0
       OR EXISTS (SELECT 1 FROM fencing.node_state WHERE role OPERATOR(pg_catalog.=) 'worker') THEN
        RAISE EXCEPTION '% runs on the Citus coordinator only', caller
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'This node is a worker (in Citus''s metadata, or recorded in fencing.node_state once fed): it takes its marks from the coordinator.';
    END IF;
END
$$;
REVOKE ALL ON FUNCTION fencing.require_citus_coordinator(text, text) FROM PUBLIC;
COMMENT ON FUNCTION fencing.require_citus_coordinator(text, text) IS
'Not API: raises unless Citus is installed here and this node is its coordinator; called by distribute_marks() and the feed lease''s functions.';

CREATE OR REPLACE FUNCTION fencing.distribute_marks()
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    fed bigint;
BEGIN
    PERFORM fencing.require_citus_coordinator('fencing.distribute_marks()',
        'Marks are distributed on a Citus cluster only; a single node keeps its own.');
    IF pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.<>) 'read committed' THEN
        RAISE EXCEPTION 'fencing.distribute_marks() runs in READ COMMITTED only'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'It must read every scope as committed after it has locked fencing.scopes.';
    END IF;
    -- this node is the coordinator, for good
    INSERT INTO fencing.node_state (role) VALUES ('coordinator') ON CONFLICT (only_row) DO NOTHING;
    IF pg_catalog.to_regclass('fencing.cluster_marks') IS NULL THEN
        CREATE TABLE fencing.cluster_marks (
            scope  text PRIMARY KEY,
            mark   bigint NOT NULL,
            owner  name NOT NULL,
            tokens text NOT NULL,
            exact  boolean NOT NULL,
            grants text[] NOT NULL
        );
        COMMENT ON TABLE fencing.cluster_marks IS
        'Every scope of the Citus cluster as its coordinator has it (mark, owner, kind, grants as privilege:role), on every node (a reference table); written by the coordinator in each transaction that changes a scope, read by each node''s trigger fencing.apply_cluster_mark().';
        REVOKE ALL ON fencing.cluster_marks FROM PUBLIC;
        CREATE TRIGGER apply_cluster_mark BEFORE INSERT OR UPDATE ON fencing.cluster_marks
            FOR EACH ROW EXECUTE FUNCTION fencing.apply_cluster_mark();
        ALTER TABLE fencing.cluster_marks ENABLE ALWAYS TRIGGER apply_cluster_mark;
        PERFORM pg_catalog.set_config('citus.enable_unsafe_triggers', 'on', true);
        PERFORM pg_catalog.create_reference_table('fencing.cluster_marks');
    END IF;
    -- a node added since has no copy yet (Citus copies reference tables
    -- without firing their triggers: the feed below writes its scopes)
    PERFORM pg_catalog.replicate_reference_tables('block_writes');
    -- each node creates the fence triggers of the shards it gets as the
    -- table's owner: what protect() granted, on every node, new ones too
    PERFORM pg_catalog.run_command_on_all_nodes(
                pg_catalog.format('GRANT EXECUTE ON FUNCTION fencing.fence_trigger() TO %I', r.rolname))
       FROM pg_catalog.pg_roles AS r
      WHERE NOT r.rolsuper
        AND r.oid IN (SELECT c.relowner FROM pg_catalog.pg_trigger AS t
                        JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) t.tgrelid
                       WHERE t.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure);
    -- every scope the coordinator has, as committed once no change of a
    -- scope is in flight (a reset read before it commits would be undone),
    -- to every node (a node's writers of each scope are waited for there)
    LOCK TABLE fencing.scopes IN SHARE MODE;
    INSERT INTO fencing.cluster_marks AS c (scope, mark, owner, tokens, exact, grants)
        SELECT s.scope, s.mark,
               pg_catalog.pg_get_userbyid(COALESCE(s.owner, r.relowner)),
               COALESCE(s.tokens, 'external'), false,
               COALESCE((SELECT pg_catalog.array_agg(g.privilege OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||)
                                    CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'public'
                                         ELSE pg_catalog.pg_get_userbyid(g.grantee)::pg_catalog.text END
                                    ORDER BY g.privilege, g.grantee)
                           FROM fencing.scope_grants AS g
                          WHERE g.scope OPERATOR(pg_catalog.=) s.scope), '{}')
          FROM fencing.scopes AS s, pg_catalog.pg_class AS r
         WHERE r.oid OPERATOR(pg_catalog.=) 'fencing.scopes'::pg_catalog.regclass
    ON CONFLICT (scope) DO UPDATE SET mark = excluded.mark, owner = excluded.owner,
                                      tokens = excluded.tokens, exact = excluded.exact,
                                      grants = excluded.grants;
    GET DIAGNOSTICS fed = ROW_COUNT;
    RETURN fed;
END
$$;
DO $$
BEGIN
    IF pg_catalog.to_regclass('fencing.cluster_marks') IS NOT NULL
       AND pg_catalog.to_regclass('pg_catalog.pg_dist_local_group') IS NOT NULL THEN
        EXECUTE 'INSERT INTO fencing.node_state (role)
                 SELECT CASE WHEN g.groupid OPERATOR(pg_catalog.=) 0 THEN ''coordinator'' ELSE ''worker'' END
                   FROM pg_catalog.pg_dist_local_group AS g
                 ON CONFLICT (only_row) DO NOTHING';
    END IF;
END $$;

-- Scope owners and grantees are regrole, no longer oid: pg_dump writes a
-- role's name and a restore into another cluster reads it back as that
-- role's OID there (as oid, the number named whatever role had it there, or
-- none).  The health view reads those columns: made again below.
DROP VIEW fencing.health;
ALTER TABLE fencing.scopes ALTER COLUMN owner TYPE pg_catalog.regrole;
ALTER TABLE fencing.scope_grants
    ALTER COLUMN grantee TYPE pg_catalog.regrole,
    ALTER COLUMN granted_by TYPE pg_catalog.regrole;

-- fencing.health reports a clock not confirmed since an unclean start, and
-- scopes and the epoch sequence outside the clock's band.
CREATE VIEW fencing.health AS
WITH settings AS (
    SELECT pg_catalog.current_setting('fsync') AS fsync,
           pg_catalog.current_setting('full_page_writes') AS full_page_writes,
           (SELECT s.reset_val FROM pg_catalog.pg_settings s
             WHERE s.name OPERATOR(pg_catalog.=) 'synchronous_commit') AS synchronous_commit,
           pg_catalog.current_setting('synchronous_standby_names') AS sync_names,
           -- the library in shared_preload_libraries, or in this session's session_preload_libraries
           EXISTS (SELECT 1
                     FROM pg_catalog.pg_settings ps,
                          pg_catalog.unnest(pg_catalog.string_to_array(ps.setting, ',')) AS l(name)
                    WHERE pg_catalog.regexp_replace(pg_catalog.btrim(l.name, ' "'), '^.*/', '')
                          OPERATOR(pg_catalog.=) ANY ('{fencing,fencing.so}'::text[])
                      AND ps.name OPERATOR(pg_catalog.=) ANY ('{shared_preload_libraries,session_preload_libraries}'::text[]))
           -- a role that may not read the setting sees no finding
           OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_settings ps
                           WHERE ps.name OPERATOR(pg_catalog.=) 'shared_preload_libraries') AS preloaded
), replicas AS (
    SELECT pg_catalog.count(*) AS connected,
           pg_catalog.count(*) FILTER (WHERE r.sync_state OPERATOR(pg_catalog.=) ANY ('{sync,quorum}'::text[])) AS sync
      FROM pg_catalog.pg_stat_replication r
)
SELECT f.severity, f."check", f.object, f.detail, f.action
FROM (
    SELECT 'critical'::text AS severity, 'fsync'::text AS "check", 'fsync'::text AS object,
           'fsync is off: a crash can lose committed terms and marks, and terms are handed out again'::text AS detail,
           'Set fsync = on.'::text AS action
      FROM settings WHERE fsync OPERATOR(pg_catalog.=) 'off'
    UNION ALL
    SELECT 'critical', 'full_page_writes', 'full_page_writes',
           'full_page_writes is off: a crash during a page write can corrupt fencing.scopes and fencing.terms',
           'Set full_page_writes = on.'
      FROM settings WHERE full_page_writes OPERATOR(pg_catalog.=) 'off'
    UNION ALL
    SELECT 'warning', 'library not preloaded', 'shared_preload_libraries',
           'fencing is not in shared_preload_libraries: a session loads it at its first fenced write, in the middle of that statement, which the fence then cannot see; a write it cannot judge without the statement (an UPDATE or MERGE leaving the row''s own token in the token column, with no declared token) is refused with SQLSTATE 55000 and must be retried',
           'Add fencing to shared_preload_libraries (restart), or to session_preload_libraries.'
      FROM settings WHERE NOT preloaded
    UNION ALL
    SELECT 'warning', 'synchronous_commit', 'synchronous_commit',
           pg_catalog.format('synchronous_commit is %s for new sessions: terms and marks are still flushed (the extension forces it), but accepted row writes may be lost by a crash',
                             synchronous_commit),
           'Set synchronous_commit = on (or remote_apply) in postgresql.conf.'
      FROM settings WHERE synchronous_commit OPERATOR(pg_catalog.=) ANY ('{off,local}'::text[])
    UNION ALL
    SELECT 'warning', 'replicas without a synchronous standby', 'synchronous_standby_names',
           pg_catalog.format('%s standby(s) connected, none synchronous: a failover to one of them can lose terms and marks the primary committed, and hand the same term to two leaders',
                             r.connected),
           'List the standbys in synchronous_standby_names (e.g. ''ANY 1 (s1, s2)''), or with Patroni set synchronous_mode (and synchronous_mode_strict).'
      FROM replicas r WHERE r.connected OPERATOR(pg_catalog.>) 0 AND r.sync OPERATOR(pg_catalog.=) 0
    UNION ALL
    SELECT 'critical', 'synchronous standby not connected', 'synchronous_standby_names',
           pg_catalog.format('synchronous_standby_names is %L but no synchronous standby is connected: every takeover and raise of a mark waits at commit until one is (statement_timeout does not apply), and a cancelled wait returns a term that may not survive a failover',
                             s.sync_names),
           'Bring a standby listed in synchronous_standby_names back, or list several (''ANY 1 (s1, s2)'').'
      FROM settings s, replicas r
     WHERE s.sync_names OPERATOR(pg_catalog.<>) '' AND r.sync OPERATOR(pg_catalog.=) 0
    UNION ALL
    SELECT 'critical', 'fence not working', p.relation::pg_catalog.text,
           pg_catalog.format('protected table %s: %s', p.relation, p.problem),
           'Re-run fencing.protect() on the table: it makes every fence trigger again, enabled ALWAYS.'
      FROM fencing.protected_tables p WHERE p.problem IS NOT NULL
    UNION ALL
    SELECT 'warning', 'may set session_replication_role', r.rolname::pg_catalog.text,
           pg_catalog.format('role %s is not a superuser but may set session_replication_role (GRANT SET ON PARAMETER): under replica, triggers not enabled ALWAYS (foreign key checks included) do not fire for its writes; the fence refuses its writes to protected tables (42501)',
                             r.rolname),
           pg_catalog.format('Unless it is a replication tool''s role that needs it: REVOKE SET ON PARAMETER session_replication_role FROM %I;', r.rolname)
      FROM pg_catalog.pg_roles r
     WHERE NOT r.rolsuper
       AND pg_catalog.has_parameter_privilege(r.oid, 'session_replication_role', 'SET')
    UNION ALL
    SELECT 'critical', 'unfenced inheritance child', i.inhrelid::pg_catalog.regclass::pg_catalog.text,
           pg_catalog.format('%s inherits from protected table %s but has no fence trigger: writes to it directly are not fenced',
                             i.inhrelid::pg_catalog.regclass, p.relation),
           pg_catalog.format('Protect it like its parent: SELECT fencing.protect(%L, %L, ...) with the same scope or scope column; or attach it as a partition instead.',
                             i.inhrelid::pg_catalog.regclass::pg_catalog.text, p.token_column)
      FROM fencing.protected_tables p
      JOIN pg_catalog.pg_class pc ON pc.oid OPERATOR(pg_catalog.=) p.relation::pg_catalog.oid
      JOIN pg_catalog.pg_inherits i ON i.inhparent OPERATOR(pg_catalog.=) p.relation::pg_catalog.oid
     WHERE pc.relkind OPERATOR(pg_catalog.<>) 'p'
       AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t
                        WHERE t.tgrelid OPERATOR(pg_catalog.=) i.inhrelid
                          AND t.tgname OPERATOR(pg_catalog.=) 'zz_fence_row'
                          AND t.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure)
    UNION ALL
    SELECT 'warning', 'lease held by a fenced holder', l.scope,
           pg_catalog.format('holder %s holds the lease of scope %s with term %s until %s, but the scope''s mark is %s: its writes are rejected, and the next acquire_lease grants a new term',
                             l.holder, l.scope, l.term, l.expires_at, s.mark),
           'Nothing to repair: the holder must acquire the lease again; find out what fenced it (fencing.terms).'
      FROM fencing.leases l
      JOIN fencing.scopes s ON s.scope OPERATOR(pg_catalog.=) l.scope
     WHERE l.released_at IS NULL AND l.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp()
       AND l.term OPERATOR(pg_catalog.<>) 0 AND s.mark OPERATOR(pg_catalog.>) l.term
    UNION ALL
    SELECT 'critical', 'scope owned by a dropped role', s.scope,
           pg_catalog.format('scope %s is owned by role OID %s, which no longer exists: a role created later with that OID would own the scope (Postgres records no dependency on it)',
                             s.scope, s.owner::pg_catalog.oid),
           pg_catalog.format('Give the scope to a role, as a superuser: SELECT fencing.alter_scope_owner(%L, ''new_owner'');', s.scope)
      FROM fencing.scopes s
     WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) s.owner::pg_catalog.oid)
    UNION ALL
    SELECT 'warning', 'grant to a dropped role', g.scope,
           pg_catalog.format('scope %s grants %s to role OID %s, which no longer exists: a role created later with that OID would hold it',
                             g.scope, g.privilege, g.grantee::pg_catalog.oid),
           pg_catalog.format('Remove the grant, as a superuser: DELETE FROM fencing.scope_grants WHERE scope = %L AND grantee = %s;',
                             g.scope, g.grantee::pg_catalog.oid)
      FROM fencing.scope_grants g
     WHERE g.grantee::pg_catalog.oid OPERATOR(pg_catalog.<>) 0
       AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) g.grantee::pg_catalog.oid)
    UNION ALL
    SELECT 'warning',
           CASE WHEN k.state OPERATOR(pg_catalog.=) 'moves' THEN 'scope not fenced since the move'
                ELSE 'scope not fenced since the promotion' END,
           s.scope,
           CASE WHEN k.state OPERATOR(pg_catalog.=) 'moves'
                THEN pg_catalog.format('scope %s has mark %s, below the floor %s of the band this copy of the database moves to (restored, upgraded or copied from another server): if its source issued terms after the copy was made, a writer the source had fenced by such a term is admitted until the scope''s next term',
                                       s.scope, s.mark, c.term_floor)
                ELSE pg_catalog.format('scope %s has mark %s, below the floor %s of this server''s timeline %s: if the failover lost commits, a writer the old primary had fenced by a lost term is admitted until the scope''s next term',
                                       s.scope, s.mark, c.term_floor, c.timeline) END,
           'Fence every term of the earlier timelines, as a superuser: SELECT fencing.fence_older_timelines(); (or take a new term in the scope).'
      FROM fencing.scopes s, fencing.clock_timeline() c, fencing.clock_state() k
     WHERE s.tokens OPERATOR(pg_catalog.=) 'issued' AND s.mark OPERATOR(pg_catalog.<) c.term_floor
    UNION ALL
    SELECT 'critical', 'Citus worker marks not current', 'fencing.cluster_marks',
           pg_catalog.format('this Citus worker refuses every write by scope: %s', n.why),
           'On the coordinator, a superuser runs: SELECT fencing.distribute_marks(); (it feeds every scope to every node)'
      FROM (SELECT fencing.cluster_node_marks() AS why) n
     WHERE n.why IS NOT NULL
    UNION ALL
    SELECT CASE c.state WHEN 'awaits confirmation' THEN 'critical' ELSE 'warning' END,
           'clock not confirmed since an unclean start', 'fencing.clock',
           pg_catalog.format('the server started from a data directory that was not shut down cleanly (a crash, or a restored file-system snapshot or copy) and issues terms on timeline %s after its crash recovery: if it is a copy, it can issue again the terms the original issued after the copy was made%s',
                             c.timeline,
                             CASE c.state WHEN 'awaits confirmation'
                                  THEN ' (fencing.clock_unclean_start = confirm: no term is issued until a superuser confirms)'
                                  ELSE '' END),
           'Once no other copy of this database issues terms, a superuser confirms: SELECT fencing.confirm_clock();'
      FROM fencing.clock_state() c
     WHERE c.state OPERATOR(pg_catalog.=) ANY ('{unconfirmed,awaits confirmation}'::text[])
    UNION ALL
    SELECT 'critical', 'clock not confirmed since a promotion', 'fencing.clock',
           pg_catalog.format('the server was promoted since it started and issues terms on timeline %s: a standby promoted onto the same timeline before it (without a shared WAL archive), or a confirmation of the clock it did not replay, could make it issue terms again (fencing.clock_promotion = confirm: no term is issued until a superuser confirms)',
                             c.timeline),
           'Once no other server of this database issues terms on this timeline, a superuser confirms: SELECT fencing.confirm_clock();'
      FROM fencing.clock_state() c
     WHERE c.state OPERATOR(pg_catalog.=) 'awaits confirmation since a promotion'
    UNION ALL
    SELECT CASE WHEN s.mark OPERATOR(pg_catalog.>=) 4611686018427387904 THEN 'critical' ELSE 'warning' END,
           'mark far above the clock', s.scope,
           CASE WHEN s.mark OPERATOR(pg_catalog.>=) 4611686018427387904
                THEN pg_catalog.format('scope %s has mark %s, near the largest bigint: few terms are left (ZF004 at the end)', s.scope, s.mark)
                ELSE pg_catalog.format('scope %s issues terms, but its mark %s is far above its latest term %s: the mark was reset or written directly, not by a term',
                                       s.scope, s.mark, s.epoch)
           END,
           pg_catalog.format('If no writer holds a token that high, its owner repairs it: SELECT fencing.reset_mark(%L, %s);',
                             s.scope, COALESCE(s.epoch, 0))
      FROM fencing.scopes s, fencing.clock_timeline() c
     WHERE s.mark OPERATOR(pg_catalog.>=) 4611686018427387904
        OR (s.tokens OPERATOR(pg_catalog.=) 'issued'
            AND s.mark OPERATOR(pg_catalog.>) 1000000
            AND s.mark OPERATOR(pg_catalog.>) (1000 OPERATOR(pg_catalog.*) GREATEST(s.epoch, c.term_floor, 1)))
    UNION ALL
    -- the clock refuses a term at or above term_limit (ZF007): the next
    -- timeline issues from there after an asynchronous failover.  A scope of
    -- external tokens that never took a term is its lock service's business.
    SELECT CASE s.tokens WHEN 'issued' THEN 'critical' ELSE 'warning' END,
           'scope outside the band', s.scope,
           pg_catalog.format('scope %s has mark %s and latest term %s: its next term would be at or above %s, the limit of the band of terms of timeline %s, where the next timeline issues after an asynchronous failover; fence_next_epoch() and acquire_lease() refuse to issue it (ZF007)',
                             s.scope, s.mark, COALESCE(s.epoch::pg_catalog.text, 'none'), c.term_limit, c.timeline),
           CASE WHEN s.tokens OPERATOR(pg_catalog.<>) 'issued'
                THEN pg_catalog.format('Take this scope''s tokens from its lock service: SELECT fencing.takeover(%L, token); or, if no writer holds a token above %s, its owner lowers the mark into the band: SELECT fencing.reset_mark(%L, %s);',
                                       s.scope, COALESCE(s.epoch, 0), s.scope, COALESCE(s.epoch, 0))
                WHEN s.epoch OPERATOR(pg_catalog.>=) (c.term_limit OPERATOR(pg_catalog.-) 1)
                THEN 'Use another scope name; or, once no other copy of this database issues terms, a superuser moves the clock''s band above every term issued: SELECT fencing.confirm_clock();'
                ELSE pg_catalog.format('If no writer holds a token above %s, its owner lowers the mark into the band: SELECT fencing.reset_mark(%L, %s);',
                                       COALESCE(s.epoch, 0), s.scope, COALESCE(s.epoch, 0))
           END
      FROM fencing.scopes s, fencing.clock_timeline() c
     WHERE (s.tokens OPERATOR(pg_catalog.=) 'issued' OR s.epoch IS NOT NULL)
       AND GREATEST(s.mark, s.epoch) OPERATOR(pg_catalog.>=) (c.term_limit OPERATOR(pg_catalog.-) 1)
    UNION ALL
    SELECT 'critical', 'epoch sequence outside the band', 'fencing.epoch_seq',
           pg_catalog.format('fencing.epoch_seq is at %s: its next value is at or above %s, the limit of the band of terms of timeline %s, so fence_next_epoch() and acquire_lease() refuse to issue any term (ZF007)',
                             q.last_value, c.term_limit, c.timeline),
           pg_catalog.format('Each scope''s terms are kept above its own mark and latest term, whatever the sequence returns: a superuser moves the sequence back into the band: SELECT pg_catalog.setval(''fencing.epoch_seq'', %s);',
                             GREATEST(c.term_floor, 1))
      FROM fencing.epoch_seq q, fencing.clock_timeline() c
     WHERE q.last_value OPERATOR(pg_catalog.>=)
           (c.term_limit OPERATOR(pg_catalog.-) CASE WHEN q.is_called THEN 1 ELSE 0 END)
) f
ORDER BY CASE f.severity WHEN 'critical' THEN 0 ELSE 1 END, f."check", f.object;
COMMENT ON VIEW fencing.health IS
'Findings that weaken fencing, one row each: severity (critical, warning), check, object, detail, action. Unsafe settings, the library not preloaded, replicas without a synchronous standby, a missing synchronous standby, protected tables whose fence does not work, roles other than superusers that may set session_replication_role, unfenced inheritance children, leases held by fenced holders, scopes not fenced since a promotion, a clock not confirmed since an unclean start or a promotion, marks far above the clock, scopes and the epoch sequence outside the clock''s band (no term issued: ZF007), scopes owned by or granted to dropped roles, a Citus worker whose marks are not current. No rows: nothing found. Readable by pg_monitor.';
REVOKE ALL ON fencing.health FROM PUBLIC;
GRANT SELECT ON fencing.health TO pg_monitor;

-- fence_next_epoch() and lease grants refuse a term at or above the band's
-- limit, the next timeline's floor (ZF007).
COMMENT ON FUNCTION fencing.fence_next_epoch(text, text) IS
'Issues a new term for a scope on leader takeover: strictly greater than every term of the scope and its mark, inside this timeline''s band (fencing.clock_timeline(); ZF007 when the next term would be at or above term_limit), durable, and the scope''s new mark. Needs the lead privilege on the scope; creates a missing scope (tokens issued) for roles allowed to create scopes.';

-- The event trigger also follows CREATE TRIGGER: a fence restored without
-- the extension's data (a dump of the application's schema alone) moves
-- the epoch clock above its rows' tokens (40_trigger.sql).
DROP EVENT TRIGGER fencing_new_partitions;
CREATE EVENT TRIGGER fencing_new_partitions ON ddl_command_end
    WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE', 'CREATE TRIGGER')
    EXECUTE FUNCTION fencing.fence_new_partitions();

-- fencing.protected_tables (and so fencing.health and fencing.table_stats)
-- reads each partition tree from the catalogs: pg_partition_tree() locked
-- every partition, so any role reading it held locks on every protected
-- partition of the database, and a tenant holding its own partition's lock
-- stalled every reader, the monitoring included (40_trigger.sql).
CREATE OR REPLACE VIEW fencing.protected_tables AS
SELECT t.tgrelid::pg_catalog.regclass AS relation,
       a.args[1]::name AS token_column,
       CASE a.args[3] WHEN 'scope' THEN a.args[4] END AS scope,
       CASE a.args[3] WHEN 'column' THEN a.args[4]::name END AS scope_column,
       a.args[2] AS on_stale,
       p.problem IS NULL AS enabled,
       -- the token source follows the fixed arguments (3 for row, else 4)
       CASE WHEN a.args[CASE a.args[3] WHEN 'row' THEN 4 ELSE 5 END]
                 OPERATOR(pg_catalog.=) 'tokens=declared'
            THEN 'declared' ELSE 'column' END AS tokens,
       p.problem
FROM pg_catalog.pg_trigger t
CROSS JOIN LATERAL (SELECT fencing.trigger_arguments(t.tgargs) AS args) a
CROSS JOIN LATERAL (
    SELECT CASE
        WHEN t.tgenabled OPERATOR(pg_catalog.=) 'D' THEN 'the fence trigger is disabled'
        WHEN t.tgenabled OPERATOR(pg_catalog.=) 'R'
            THEN 'the fence trigger fires only under session_replication_role = replica'
        WHEN t.tgqual IS NOT NULL THEN 'the fence trigger has a WHEN condition'
        ELSE (SELECT pg_catalog.format('%s on %s', w.what, w.rel)
                FROM (SELECT pt.relid AS rel, pt.level,
                             CASE
                               WHEN r.tgenabled IS NULL THEN 'no fence trigger'
                               WHEN r.tgenabled OPERATOR(pg_catalog.<>) ALL ('{O,A}'::"char"[])
                                    OR r.tgqual IS NOT NULL THEN 'the fence trigger does not fire'
                               WHEN r.tgenabled OPERATOR(pg_catalog.<>) 'A'
                                    THEN 'the fence trigger is not enabled ALWAYS'
                               -- type bits ROW 1, BEFORE 2, INSERT 4, DELETE 8, UPDATE 16 (TRUNCATE 32, INSTEAD 64)
                               WHEN (r.tgtype::pg_catalog.int4 OPERATOR(pg_catalog.&) 127) OPERATOR(pg_catalog.<>) 31
                                    THEN 'the fence trigger is not BEFORE INSERT OR UPDATE OR DELETE FOR EACH ROW'
                               WHEN pg_catalog.cardinality(r.tgattr::pg_catalog.int2[]) OPERATOR(pg_catalog.>) 0
                                    THEN 'the fence trigger fires for UPDATE OF some columns only'
                               WHEN tr.tgenabled IS NULL THEN 'TRUNCATE is not fenced'
                               WHEN tr.tgenabled OPERATOR(pg_catalog.<>) ALL ('{O,A}'::"char"[])
                                    OR tr.tgqual IS NOT NULL THEN 'the TRUNCATE fence does not fire'
                               WHEN tr.tgenabled OPERATOR(pg_catalog.<>) 'A'
                                    THEN 'the TRUNCATE fence is not enabled ALWAYS'
                               WHEN a.args[3] OPERATOR(pg_catalog.=) 'row' THEN NULL
                               WHEN i.tgenabled IS NULL
                                    THEN 'no AFTER INSERT fence trigger'
                               WHEN i.tgenabled OPERATOR(pg_catalog.<>) ALL ('{O,A}'::"char"[])
                                    THEN 'the AFTER INSERT fence trigger does not fire'
                               WHEN i.tgenabled OPERATOR(pg_catalog.<>) 'A'
                                    THEN 'the AFTER INSERT fence trigger is not enabled ALWAYS'
                             END AS what
                        -- the table and every partition below it (not one
                        -- being detached), from the catalogs:
                        -- pg_partition_tree() would lock each partition, for
                        -- any role reading the view
                        FROM (WITH RECURSIVE tree(relid, level) AS (
                                SELECT t.tgrelid, 0
                                UNION ALL
                                SELECT inh.inhrelid, tree.level OPERATOR(pg_catalog.+) 1
                                  FROM tree
                                  JOIN pg_catalog.pg_inherits inh
                                    ON inh.inhparent OPERATOR(pg_catalog.=) tree.relid
                                  JOIN pg_catalog.pg_class part
                                    ON part.oid OPERATOR(pg_catalog.=) inh.inhrelid
                                 WHERE part.relispartition
                                   AND NOT inh.inhdetachpending)
                              SELECT tree.relid::pg_catalog.regclass AS relid, tree.level
                                FROM tree) pt
                        LEFT JOIN pg_catalog.pg_trigger r
                               ON r.tgrelid OPERATOR(pg_catalog.=) pt.relid
                              AND r.tgname OPERATOR(pg_catalog.=) 'zz_fence_row'
                              AND r.tgfoid OPERATOR(pg_catalog.=) t.tgfoid
                        LEFT JOIN pg_catalog.pg_trigger tr
                               ON tr.tgrelid OPERATOR(pg_catalog.=) pt.relid
                              AND tr.tgname OPERATOR(pg_catalog.=) 'zz_fence_truncate'
                              AND tr.tgfoid OPERATOR(pg_catalog.=) t.tgfoid
                        -- an AFTER (not BEFORE) ROW INSERT trigger: type bits ROW 1, BEFORE 2, INSERT 4
                        LEFT JOIN pg_catalog.pg_trigger i
                               ON i.tgrelid OPERATOR(pg_catalog.=) pt.relid
                              AND i.tgname OPERATOR(pg_catalog.=) 'zz_fence_inserted'
                              AND i.tgfoid OPERATOR(pg_catalog.=) t.tgfoid
                              AND (i.tgtype::pg_catalog.int4 OPERATOR(pg_catalog.&) 7) OPERATOR(pg_catalog.=) 5) w
               WHERE w.what IS NOT NULL
               ORDER BY w.level, w.rel::pg_catalog.text
               LIMIT 1)
    END AS problem
) p
WHERE t.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure
  AND t.tgname OPERATOR(pg_catalog.=) 'zz_fence_row'
  AND t.tgparentid OPERATOR(pg_catalog.=) 0;

-- Citus (issue 34, its last case): the feed lease.
-- The feed lease of a Citus cluster (opt-in; src/state/cluster_marks.c says
-- why it holds): a worker cut off from the coordinator by the network and
-- then disabled no longer gets the takeovers, and nothing tells it.  Under a
-- lease each worker refuses writes by scope once its lease, renewed by
-- fencing.renew_cluster_lease() on the coordinator, has run out on its own
-- clock; a takeover on the coordinator waits, after a node that may hold a
-- lease stopped being an active primary, until that lease has surely run
-- out (longest * 1.1 + 1 s).  The coordinator's setting: lease, the one
-- renewals grant ('0': none), and longest, the longest ever set (a cut-off
-- worker may still hold it).  set_in: the transaction that set it (a renewal
-- in that same transaction would let a worker hold a lease the coordinator
-- has not committed).
CREATE TABLE fencing.cluster_lease (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    lease    interval NOT NULL,
    longest  interval NOT NULL,
    set_in   xid8
);
COMMENT ON TABLE fencing.cluster_lease IS
'The feed lease of a Citus cluster, on its coordinator (fencing.set_cluster_lease()): lease, what fencing.renew_cluster_lease() grants every active worker (''0'': none); longest, the longest lease ever set, which a takeover waits out after a node that may hold one was disabled or removed. Written only by the extension.';
SELECT pg_catalog.pg_extension_config_dump('fencing.cluster_lease', '');
REVOKE ALL ON fencing.cluster_lease FROM PUBLIC;

-- Every worker a renewal reached, or tried to (recorded before the call):
-- it may hold a lease.  lapsed_at: when a change of a scope first saw it no
-- active primary (disabled, removed); a renewal clears it.  offer: the
-- worker's last offer the coordinator has received, which the next renewal
-- acknowledges (the worker's lease starts at that offer).
CREATE TABLE fencing.cluster_lease_nodes (
    nodename  text NOT NULL,
    nodeport  integer NOT NULL,
    lapsed_at timestamptz,
    offer     uuid,
    PRIMARY KEY (nodename, nodeport)
);
COMMENT ON TABLE fencing.cluster_lease_nodes IS
'On a Citus coordinator: every worker that may hold a feed lease. lapsed_at: when a change of a scope first saw it no longer an active primary (a takeover waits out its lease from then); offer: its last offer received by a renewal, acknowledged by the next. Written only by the extension.';
SELECT pg_catalog.pg_extension_config_dump('fencing.cluster_lease_nodes', '');
REVOKE ALL ON fencing.cluster_lease_nodes FROM PUBLIC;

CREATE FUNCTION fencing.take_cluster_lease(lease interval, acknowledged uuid[])
RETURNS jsonb
AS 'MODULE_PATHNAME', 'fencing_take_cluster_lease'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
-- Not API: the coordinator's renewal calls it as a superuser.
REVOKE ALL ON FUNCTION fencing.take_cluster_lease(interval, uuid[]) FROM PUBLIC;
COMMENT ON FUNCTION fencing.take_cluster_lease(interval, uuid[]) IS
'On a Citus worker, called by the coordinator''s fencing.renew_cluster_lease(): takes the feed lease (''0'': none) from the time of its own offer named in acknowledged, records a new offer and returns {offer, granted, lease, lease_from}; NULL on a worker never fed. Refused on the coordinator.';

CREATE FUNCTION fencing.set_cluster_lease(lease interval)
RETURNS interval
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    longest interval;
BEGIN
    PERFORM fencing.require_citus_coordinator('fencing.set_cluster_lease()', 'The feed lease is a Citus cluster''s.');
    IF lease IS NULL OR pg_catalog.date_part('month', lease) OPERATOR(pg_catalog.<>) 0
       OR pg_catalog.date_part('day', lease) OPERATOR(pg_catalog.<>) 0
       OR lease OPERATOR(pg_catalog.<) '0'::pg_catalog.interval THEN
        RAISE EXCEPTION 'invalid feed lease'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A feed lease is a duration of zero or more in hours, minutes and seconds, without days or months; ''0'' turns it off.';
    END IF;
    INSERT INTO fencing.cluster_lease AS c (only_row, lease, longest, set_in)
         VALUES (true, lease, lease, pg_catalog.pg_current_xact_id())
    ON CONFLICT (only_row) DO UPDATE
        SET lease = excluded.lease,
            longest = GREATEST(c.longest, excluded.longest),
            set_in = excluded.set_in
    RETURNING c.longest INTO longest;
    RETURN longest;
END
$$;
REVOKE ALL ON FUNCTION fencing.set_cluster_lease(interval) FROM PUBLIC;
COMMENT ON FUNCTION fencing.set_cluster_lease(interval) IS
'On the coordinator of a Citus cluster (superuser): sets the feed lease that fencing.renew_cluster_lease() grants every active worker (''0'': none, the default). Commit it before renewing. Returns the longest lease ever set, which a takeover waits out (times 1.1, plus 1 s) after a node was disabled or removed.';

CREATE FUNCTION fencing.renew_cluster_lease()
RETURNS TABLE (nodename text, nodeport integer, renewed boolean, detail text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    setting record;
    acked uuid[];
    r record;
    answer jsonb;
BEGIN
    PERFORM fencing.require_citus_coordinator('fencing.renew_cluster_lease()', 'The feed lease is a Citus cluster''s.');
    -- one renewal at a time
    SELECT c.lease, c.set_in INTO setting FROM fencing.cluster_lease AS c FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no feed lease is set'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Set one with fencing.set_cluster_lease(), and commit, first.';
    END IF;
    IF setting.set_in OPERATOR(pg_catalog.=) pg_catalog.pg_current_xact_id_if_assigned() THEN
        RAISE EXCEPTION 'the feed lease was set in this transaction'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'No worker may hold a lease before the coordinator has committed it: a takeover waits out the longest lease committed.',
                  HINT = 'Commit fencing.set_cluster_lease(), then renew.';
    END IF;
    -- citus_disable_node, citus_remove_node and citus_activate_node take
    -- EXCLUSIVE on pg_dist_node: each waits for this renewal to end
    LOCK TABLE pg_catalog.pg_dist_node IN ROW SHARE MODE;
    -- a node that may hold a lease and is no active primary any more: its
    -- lapse is recorded here too, and commits with the renewal, so that a
    -- takeover cancelled during its wait (statement_timeout), whose own
    -- record rolls back with it, does not start the wait over on every try
    UPDATE fencing.cluster_lease_nodes AS l SET lapsed_at = pg_catalog.clock_timestamp()
     WHERE l.lapsed_at IS NULL
       AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_node AS d
                        WHERE d.nodename OPERATOR(pg_catalog.=) l.nodename
                          AND d.nodeport OPERATOR(pg_catalog.=) l.nodeport
                          AND d.isactive AND d.noderole OPERATOR(pg_catalog.=) 'primary');
    -- every worker that may hold a lease, recorded before any call reaches it
    INSERT INTO fencing.cluster_lease_nodes AS l (nodename, nodeport)
        SELECT n.nodename, n.nodeport FROM pg_catalog.pg_dist_node AS n
         WHERE n.isactive AND n.noderole OPERATOR(pg_catalog.=) 'primary'
           AND n.groupid OPERATOR(pg_catalog.<>) 0
    ON CONFLICT ON CONSTRAINT cluster_lease_nodes_pkey DO UPDATE SET lapsed_at = NULL;
    -- the offers received by committed renewals: a worker's lease starts at its own
    SELECT pg_catalog.array_agg(l.offer) INTO acked
      FROM fencing.cluster_lease_nodes AS l WHERE l.offer IS NOT NULL;
    FOR r IN SELECT * FROM pg_catalog.run_command_on_workers(
                 pg_catalog.format('SELECT fencing.take_cluster_lease(%L::pg_catalog.interval, %L::pg_catalog.uuid[])',
                                   setting.lease, COALESCE(acked, '{}'::pg_catalog.uuid[])))
    LOOP
        nodename := r.nodename;
        nodeport := r.nodeport;
        renewed := false;
        IF NOT r.success THEN
            detail := 'not renewed: ' OPERATOR(pg_catalog.||) r.result;
        ELSIF r.result IS NULL OR r.result OPERATOR(pg_catalog.=) '' THEN
            detail := 'not renewed: the node was never fed the coordinator''s marks (run fencing.distribute_marks())';
        ELSE
            answer := r.result::pg_catalog.jsonb;
            UPDATE fencing.cluster_lease_nodes AS l SET offer = (answer OPERATOR(pg_catalog.->>) 'offer')::pg_catalog.uuid
             WHERE l.nodename OPERATOR(pg_catalog.=) r.nodename AND l.nodeport OPERATOR(pg_catalog.=) r.nodeport;
            renewed := (answer OPERATOR(pg_catalog.->>) 'granted')::pg_catalog.bool;
            detail := CASE
                WHEN setting.lease OPERATOR(pg_catalog.=) '0'::pg_catalog.interval THEN 'no lease: the node holds none now'
                WHEN renewed THEN pg_catalog.format('lease %s from %s (on the node''s clock)',
                                                   answer OPERATOR(pg_catalog.->>) 'lease',
                                                   answer OPERATOR(pg_catalog.->>) 'lease_from')
                ELSE 'offer recorded: the next renewal grants the lease' END;
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION fencing.renew_cluster_lease() FROM PUBLIC;
COMMENT ON FUNCTION fencing.renew_cluster_lease() IS
'On the coordinator of a Citus cluster (superuser): renews the feed lease (fencing.set_cluster_lease()) on every active worker; run it every third of the lease (pg_cron). A worker holds the lease from its second renewal on, measured from its offer at the first; a worker not renewed refuses writes by scope once its lease runs out. One row per worker: renewed, and why not.';
