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
