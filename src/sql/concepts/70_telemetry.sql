-- 70_telemetry.sql: counters, last rejections and their views.
-- Counters live in shared memory (src/telemetry/fence_stats.c) when fencing
-- is in shared_preload_libraries; without it the views show what the tables
-- say, with null counters and a NOTICE.  Nothing here is on the path of an
-- accepted write.

CREATE FUNCTION fencing.scope_counters(
    OUT scope text,
    OUT rejected_stale bigint,
    OUT rejected_missing bigint,
    OUT rejected_not_issued bigint,
    OUT rejected_conflict bigint,
    OUT skipped bigint,
    OUT bypassed bigint,
    OUT terms_issued bigint,
    OUT lease_grants bigint,
    OUT lease_renewals_refused bigint,
    OUT lease_expiries bigint,
    OUT last_rejection_at timestamptz, OUT stats_since timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'fencing_scope_counters'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION fencing.scope_counters() IS
'The shared-memory counters of every scope of this database that had an event since the last reset (no rows when fencing is not in shared_preload_libraries). Read fencing.scope_stats instead.';

CREATE FUNCTION fencing.table_counters(
    OUT relation oid,
    OUT rejected_stale bigint,
    OUT rejected_missing bigint,
    OUT rejected_not_issued bigint,
    OUT rejected_conflict bigint,
    OUT skipped bigint,
    OUT bypassed bigint,
    OUT terms_issued bigint,
    OUT lease_grants bigint,
    OUT lease_renewals_refused bigint,
    OUT lease_expiries bigint,
    OUT last_rejection_at timestamptz, OUT stats_since timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'fencing_table_counters'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION fencing.table_counters() IS
'The shared-memory counters of every relation (partitions apart) of this database that had an event since the last reset. Read fencing.table_stats instead.';

CREATE FUNCTION fencing.last_rejection_events(
    OUT by text, OUT scope text, OUT relation oid, OUT kind text, OUT sqlstate text,
    OUT occurred_at timestamptz, OUT token bigint, OUT mark bigint, OUT declared bigint,
    OUT role text, OUT application_name text, OUT client text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'fencing_last_rejection_events'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION fencing.last_rejection_events() IS
'The last rejection of each kind per scope (by = scope) and per relation (by = table), from shared memory. Read fencing.last_rejections instead.';

CREATE FUNCTION fencing.stats_info(OUT enabled boolean, OUT entries bigint,
                                   OUT max_entries integer, OUT untracked bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'fencing_stats_info'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION fencing.stats_info() IS
'Whether statistics are collected (fencing in shared_preload_libraries), the entries in use (all databases), fencing.stats_max, and events not counted because the table was full.';

CREATE FUNCTION fencing.stats_reset()
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'fencing_stats_reset'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fencing.stats_reset() FROM PUBLIC;
COMMENT ON FUNCTION fencing.stats_reset() IS
'Forgets the counters and last rejections of every scope and table of the current database. Superusers, or roles granted EXECUTE. Fails unless fencing is in shared_preload_libraries.';

-- Per scope: what the tables say (mark, latest term, lease) beside what
-- shared memory counted.  security_invoker: the row security of the tables
-- decides which scopes a caller sees (pg_monitor sees all).
CREATE VIEW fencing.scope_stats AS
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

-- Per protected table (a partitioned table adds up its partitions).
CREATE VIEW fencing.table_stats AS
SELECT p.relation,
       p.scope,
       p.scope_column,
       p.on_stale,
       p.enabled,
       CASE WHEN i.enabled THEN coalesce(c.rejected_stale, 0) END AS rejected_stale,
       CASE WHEN i.enabled THEN coalesce(c.rejected_missing, 0) END AS rejected_missing,
       CASE WHEN i.enabled THEN coalesce(c.rejected_not_issued, 0) END AS rejected_not_issued,
       CASE WHEN i.enabled THEN coalesce(c.rejected_conflict, 0) END AS rejected_conflict,
       CASE WHEN i.enabled THEN coalesce(c.skipped, 0) END AS skipped,
       CASE WHEN i.enabled THEN coalesce(c.bypassed, 0) END AS bypassed,
       c.last_rejection_at,
       c.stats_since
FROM fencing.protected_tables p
LEFT JOIN (SELECT coalesce(pg_catalog.pg_partition_root(t.relation::pg_catalog.regclass),
                                      t.relation::pg_catalog.regclass) AS root,
               pg_catalog.sum(t.rejected_stale)::pg_catalog.int8 AS rejected_stale,
               pg_catalog.sum(t.rejected_missing)::pg_catalog.int8 AS rejected_missing,
               pg_catalog.sum(t.rejected_not_issued)::pg_catalog.int8 AS rejected_not_issued,
               pg_catalog.sum(t.rejected_conflict)::pg_catalog.int8 AS rejected_conflict,
               pg_catalog.sum(t.skipped)::pg_catalog.int8 AS skipped,
               pg_catalog.sum(t.bypassed)::pg_catalog.int8 AS bypassed,
               pg_catalog.max(t.last_rejection_at) AS last_rejection_at,
               pg_catalog.min(t.stats_since) AS stats_since
          FROM fencing.table_counters() t
         GROUP BY 1) c
       ON c.root OPERATOR(pg_catalog.=) p.relation
CROSS JOIN fencing.stats_info() i;
COMMENT ON VIEW fencing.table_stats IS
'Per protected table: rejections by kind, skipped rows and bypassed writes since the last reset (null when fencing is not in shared_preload_libraries).';

CREATE VIEW fencing.last_rejections AS
SELECT e.by, e.scope, e.relation::pg_catalog.regclass AS relation, e.kind, e.sqlstate,
       e.occurred_at, e.token, e.mark, e.declared, e.role, e.application_name, e.client
FROM fencing.last_rejection_events() e
WHERE e.scope IS NULL OR fencing.may_read(e.scope);
COMMENT ON VIEW fencing.last_rejections IS
'The last rejection of each kind (stale, missing, not_issued, conflict, skipped) per scope (by = scope) and per table (by = table): when, the token offered, the mark, the declared token (conflict), role, application_name and client address.';

DO $invoker$
BEGIN
    IF pg_catalog.current_setting('server_version_num')::pg_catalog.int4 OPERATOR(pg_catalog.>=) 150000 THEN
        ALTER VIEW fencing.scope_stats SET (security_invoker = true);
    END IF;
END
$invoker$;

-- Monitoring roles read them; nobody else by default.
REVOKE ALL ON FUNCTION fencing.scope_counters(), fencing.table_counters(),
    fencing.last_rejection_events(), fencing.stats_info() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fencing.scope_counters(), fencing.table_counters(),
    fencing.last_rejection_events(), fencing.stats_info() TO pg_monitor;
GRANT SELECT ON fencing.scope_stats, fencing.table_stats, fencing.last_rejections TO pg_monitor;
