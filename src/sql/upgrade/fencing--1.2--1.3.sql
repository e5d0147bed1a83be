-- fencing--1.2--1.3.sql: lease calls in C; fence_older_timelines().
-- Every name used below is schema-qualified; nothing depends on search_path.

\echo Use "ALTER EXTENSION fencing UPDATE TO '1.3'" to load this file. \quit

-- The lease functions are C (src/leases/lease.c), no longer SECURITY
-- DEFINER plpgsql: they check the calling role's lead privilege themselves
-- and write the lease, term and mark rows directly.  Same signatures,
-- results, errors and privileges; CREATE OR REPLACE keeps their ACLs and
-- drops SECURITY DEFINER and the search_path setting.
CREATE OR REPLACE FUNCTION fencing.acquire_lease(scope text, holder text, ttl interval,
    OUT granted boolean, OUT term bigint, OUT lease_holder text, OUT expires_at timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'acquire_lease'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.acquire_lease(text, text, interval) IS
'Grants the scope''s lease when it is free or expired, with a new term (the previous holder is fenced); when another holder''s lease is live, grants nothing and says who holds it until when. A holder asking again for its live lease keeps its term. Needs the lead privilege on the scope.';

CREATE OR REPLACE FUNCTION fencing.renew_lease(scope text, holder text, term bigint, ttl interval,
    OUT renewed boolean, OUT expires_at timestamptz,
    OUT lease_holder text, OUT lease_term bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'renew_lease'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.renew_lease(text, text, bigint, interval) IS
'Extends the lease for the holder of the current term while it has not expired; anything else changes nothing, returns renewed = false and who holds the lease now, if anyone. Needs the lead privilege on the scope.';

CREATE OR REPLACE FUNCTION fencing.release_lease(scope text, holder text, term bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'release_lease'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.release_lease(text, text, bigint) IS
'Ends the live lease of this holder and term at once, so the next acquire gets a new term; anything else changes nothing and returns false. Needs the lead privilege on the scope.';

-- Internal helpers that only the plpgsql lease functions called.  The
-- library keeps their C symbols for a schema that is not updated yet.
DROP FUNCTION fencing.check_lease_args(text, text, interval);
DROP FUNCTION fencing.lock_held_lease(text, text, bigint);
DROP FUNCTION fencing.check_names(text, text);
DROP FUNCTION fencing.check_scope_privilege(text, text, text);
DROP FUNCTION fencing.count_lease_event(text, text);

-- Grants and revokes, whoever writes them, make every backend forget its
-- cached answers for the scope (src/security/scope_binding.c: which scopes
-- a table's scope column may name).
COMMENT ON FUNCTION fencing.forget_cached_marks() IS
'Trigger function on fencing.scopes and fencing.scope_grants: makes every backend forget what it cached of the scopes a committed write changed, marks and privileges (all of them for TRUNCATE).';
-- A grant or revoke changes which tables' scope columns may name the scope
-- (src/security/scope_binding.c): every backend forgets its answers for
-- that scope, whoever wrote the row (as for fencing.scopes, 20_marks.sql).
CREATE TRIGGER forget_cached_grants AFTER INSERT OR UPDATE OR DELETE
    ON fencing.scope_grants FOR EACH ROW EXECUTE FUNCTION fencing.forget_cached_marks();
CREATE TRIGGER forget_all_cached_grants AFTER TRUNCATE
    ON fencing.scope_grants FOR EACH STATEMENT EXECUTE FUNCTION fencing.forget_cached_marks();
ALTER TABLE fencing.scope_grants ENABLE ALWAYS TRIGGER forget_cached_grants;
ALTER TABLE fencing.scope_grants ENABLE ALWAYS TRIGGER forget_all_cached_grants;

-- The health view also finds scopes owned by, and grants to, roles that were
-- dropped (scope owners and grantees are role OIDs: Postgres records no
-- dependency on them), and 'issued' scopes not fenced since a promotion.
-- CREATE OR REPLACE keeps its privileges.
CREATE OR REPLACE VIEW fencing.health AS
WITH settings AS (
    SELECT pg_catalog.current_setting('fsync') AS fsync,
           pg_catalog.current_setting('full_page_writes') AS full_page_writes,
           (SELECT s.reset_val FROM pg_catalog.pg_settings s
             WHERE s.name OPERATOR(pg_catalog.=) 'synchronous_commit') AS synchronous_commit,
           pg_catalog.current_setting('synchronous_standby_names') AS sync_names
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
           'Re-run fencing.protect() on the table, or ALTER TABLE ... ENABLE TRIGGER zz_fence_row.'
      FROM fencing.protected_tables p WHERE p.problem IS NOT NULL
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
                             s.scope, s.owner),
           pg_catalog.format('Give the scope to a role, as a superuser: SELECT fencing.alter_scope_owner(%L, ''new_owner'');', s.scope)
      FROM fencing.scopes s
     WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) s.owner)
    UNION ALL
    SELECT 'warning', 'grant to a dropped role', g.scope,
           pg_catalog.format('scope %s grants %s to role OID %s, which no longer exists: a role created later with that OID would hold it',
                             g.scope, g.privilege, g.grantee),
           pg_catalog.format('Remove the grant, as a superuser: DELETE FROM fencing.scope_grants WHERE scope = %L AND grantee = %s;',
                             g.scope, g.grantee)
      FROM fencing.scope_grants g
     WHERE g.grantee OPERATOR(pg_catalog.<>) 0
       AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) g.grantee)
    UNION ALL
    SELECT 'warning', 'scope not fenced since the promotion', s.scope,
           pg_catalog.format('scope %s has mark %s, below the floor %s of this server''s timeline %s: if the failover lost commits, a writer the old primary had fenced by a lost term is admitted until the scope''s next term',
                             s.scope, s.mark, c.term_floor, c.timeline),
           'Fence every term of the earlier timelines, as a superuser: SELECT fencing.fence_older_timelines(); (or take a new term in the scope).'
      FROM fencing.scopes s, fencing.clock_timeline() c
     WHERE s.tokens OPERATOR(pg_catalog.=) 'issued' AND s.mark OPERATOR(pg_catalog.<) c.term_floor
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
) f
ORDER BY CASE f.severity WHEN 'critical' THEN 0 ELSE 1 END, f."check", f.object;
COMMENT ON VIEW fencing.health IS
'Findings that weaken fencing, one row each: severity (critical, warning), check, object, detail, action. Unsafe settings, replicas without a synchronous standby, a missing synchronous standby, protected tables whose fence does not work, unfenced inheritance children, leases held by fenced holders, scopes not fenced since a promotion, marks far above the clock, scopes owned by or granted to dropped roles. No rows: nothing found. Readable by pg_monitor.';

-- After a failover that lost commits (src/marks/failover_fence.c): lift the
-- marks of 'issued' scopes to the floor of the server's timeline, so every
-- term of the timelines before it is fenced before any new term is taken.
-- For the failover manager's promotion hook; a superuser's by default.
CREATE FUNCTION fencing.fence_older_timelines(max_scopes integer DEFAULT 1000)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_older_timelines'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fencing.fence_older_timelines(integer) FROM PUBLIC;
COMMENT ON FUNCTION fencing.fence_older_timelines(integer) IS
'After a promotion: raises the mark of every ''issued'' scope below the floor of this server''s timeline (fencing.clock_timeline().term_floor) to that floor, so that a writer holding a term of an earlier timeline is rejected before the new leader takes its term. Each scope as its owner''s raise: waits for its in-flight writers, commits durably. At most max_scopes per call (call again until it returns 0); returns how many marks it raised. ''external'' scopes are left to takeover().';
