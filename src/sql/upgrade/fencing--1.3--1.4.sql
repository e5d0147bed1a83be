-- fencing--1.3--1.4.sql: upgrade of the fencing extension from 1.3 to 1.4.
-- Each change says what it gives a 1.3 install; a fresh 1.4 install gets
-- the same objects from src/sql/concepts/ (test 99_upgrade_objects).

\echo Use "ALTER EXTENSION fencing UPDATE TO '1.4'" to load this file. \quit

-- Internal functions are not executable by PUBLIC.  fence_trigger():
-- a CREATE TRIGGER made by hand could bind any table to any scope (protect()
-- now creates the triggers as the extension's owner; existing triggers keep
-- firing: Postgres checks EXECUTE only at CREATE TRIGGER).  Two stay
-- PUBLIC's, as their callers run them with their own rights: raise_pending()
-- (the WHEN condition of zz_fence_inserted) and trigger_arguments(bytea)
-- (called by the protected_tables view; it now refuses invalid text).
REVOKE ALL ON FUNCTION fencing.fence_trigger() FROM PUBLIC;
-- The owners of protected partitioned tables keep adding partitions (Postgres
-- copies the row trigger onto a new partition with the rights of the role
-- creating it): each gets EXECUTE on the fence, as protect() gives it from
-- 1.4 on.  Superusers need no grant.
DO $grant_partition_owners$
DECLARE
    owner_name pg_catalog.name;
BEGIN
    FOR owner_name IN
        SELECT DISTINCT r.rolname
          FROM pg_catalog.pg_trigger t
          JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) t.tgrelid
          JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) c.relowner
         WHERE t.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure
           AND t.tgname OPERATOR(pg_catalog.=) 'zz_fence_row'
           AND c.relkind OPERATOR(pg_catalog.=) 'p'
           AND NOT r.rolsuper
    LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION fencing.fence_trigger() TO %I', owner_name);
    END LOOP;
END
$grant_partition_owners$;
-- The fence never guesses which statement fired it: fencing.health
-- reports a server that does not preload the library ("library not
-- preloaded"); its new definition is below, with the other checks of 1.4.

-- ALTER EXTENSION UPDATE says when the server does not preload the library.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1
                     FROM pg_catalog.pg_settings ps,
                          pg_catalog.unnest(pg_catalog.string_to_array(ps.setting, ',')) AS l(name)
                    WHERE pg_catalog.regexp_replace(pg_catalog.btrim(l.name, ' "'), '^.*/', '')
                          OPERATOR(pg_catalog.=) ANY ('{fencing,fencing.so}'::text[])
                      AND ps.name OPERATOR(pg_catalog.=) ANY ('{shared_preload_libraries,session_preload_libraries}'::text[]))
       AND EXISTS (SELECT 1 FROM pg_catalog.pg_settings ps
                    WHERE ps.name OPERATOR(pg_catalog.=) 'shared_preload_libraries') THEN
        -- a warning: an extension script runs with client_min_messages
        -- raised to warning, and the server's configuration deserves one
        RAISE WARNING 'fencing is not in shared_preload_libraries'
            USING DETAIL = 'A session then loads the library at its first fenced write, in the middle of that statement, which the fence cannot see: a write it cannot judge without the statement is refused (SQLSTATE 55000) and must be retried.',
                  HINT = 'Add fencing to shared_preload_libraries (restart), or to session_preload_libraries.';
    END IF;
END $$;

-- Scopes are locked by an id of their own, no longer by a hash of their
-- name: every existing scope gets one now (src/marks/scope_lock.c).
CREATE SEQUENCE fencing.scope_ids AS bigint MINVALUE 1 NO CYCLE;
COMMENT ON SEQUENCE fencing.scope_ids IS 'The ids of scopes: one for each scope when it is created.';
SELECT pg_catalog.pg_extension_config_dump('fencing.scope_ids', '');
REVOKE ALL ON fencing.scope_ids FROM PUBLIC;
ALTER TABLE fencing.scopes
    ADD COLUMN id bigint NOT NULL DEFAULT pg_catalog.nextval('fencing.scope_ids'::pg_catalog.regclass);
COMMENT ON COLUMN fencing.scopes.id IS 'The number the scope is locked by, drawn from fencing.scope_ids when the scope is created: no name collides with it.';

-- The fence triggers fire ALWAYS: under session_replication_role
-- = replica the fence lets only a superuser session or a logical replication
-- apply worker (as a superuser or the table's owner) write unchecked and
-- refuses anyone else granted SET on the role (42501).  protect() creates
-- them so from 1.4 on; the triggers of
-- tables protected before, partitions' clones included, that fire on origin
-- (plain ENABLE) now fire ALWAYS.  A disabled one, or one enabled for
-- replica only, stays as it is (protected_tables reports it).
DO $fire_always$
DECLARE
    rel pg_catalog.regclass;
    subcommands text;
BEGIN
    FOR rel, subcommands IN
        SELECT t.tgrelid::pg_catalog.regclass,
               pg_catalog.string_agg(pg_catalog.format('ENABLE ALWAYS TRIGGER %I', t.tgname), ', ' ORDER BY t.tgname)
          FROM pg_catalog.pg_trigger t
         WHERE t.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure
           AND t.tgname OPERATOR(pg_catalog.=) ANY ('{zz_fence_row,zz_fence_truncate,zz_fence_inserted}'::pg_catalog.name[])
           AND t.tgenabled OPERATOR(pg_catalog.=) 'O'
         GROUP BY t.tgrelid
         ORDER BY t.tgrelid
    LOOP
        EXECUTE pg_catalog.format('ALTER TABLE ONLY %s %s', rel, subcommands);
    END LOOP;
END
$fire_always$;
-- protected_tables: every trigger the fence needs counts, on the table and
-- on every partition, the AFTER INSERT one too, and each must fire ALWAYS;
-- zz_fence_row must be BEFORE INSERT OR UPDATE OR DELETE FOR EACH ROW, for
-- every column; the token source is read after the fixed arguments;
-- health lists roles other than superusers that may set
-- session_replication_role.
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
                        FROM (SELECT t.tgrelid::pg_catalog.regclass AS relid, 0 AS level
                              UNION ALL
                              SELECT tree.relid, tree.level
                                FROM pg_catalog.pg_partition_tree(t.tgrelid) tree
                               WHERE tree.level OPERATOR(pg_catalog.>) 0) pt
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
CREATE OR REPLACE VIEW fencing.health AS
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
'Findings that weaken fencing, one row each: severity (critical, warning), check, object, detail, action. Unsafe settings, the library not preloaded, replicas without a synchronous standby, a missing synchronous standby, protected tables whose fence does not work, roles other than superusers that may set session_replication_role, unfenced inheritance children, leases held by fenced holders, scopes not fenced since a promotion, marks far above the clock, scopes owned by or granted to dropped roles. No rows: nothing found. Readable by pg_monitor.';

-- The C functions: from 1.4 each SQL function calls the C symbol
-- fencing_<its name> (the library exports nothing else of its own).  The
-- old symbols stay in the library for databases not yet updated
-- (src/legacy/older_sql.c); these definitions are the install script's.
CREATE OR REPLACE FUNCTION fencing.fence_next_epoch(scope text, holder text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_fence_next_epoch'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.clock_timeline(OUT timeline bigint, OUT term_floor bigint,
                                       OUT term_limit bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'fencing_clock_timeline'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION fencing.reset_mark(scope text, mark bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_reset_mark'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.takeover(scope text, token bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_takeover'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.fence_older_timelines(max_scopes integer DEFAULT 1000)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_fence_older_timelines'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.committed_mark(scope text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_committed_mark'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION fencing.forget_cached_marks()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fencing_forget_cached_marks'
LANGUAGE C;

CREATE OR REPLACE FUNCTION fencing.use_token(scope text, token bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_use_token'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.use_token(scope text, token text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_use_token_text'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.use_token(token bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_use_token_all_scopes'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.declared_token(scope text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_declared_token'
LANGUAGE C STABLE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.fence_trigger()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fencing_fence_trigger'
LANGUAGE C;

CREATE OR REPLACE FUNCTION fencing.raise_pending()
RETURNS boolean
AS 'MODULE_PATHNAME', 'fencing_raise_pending'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.trigger_arguments(tgargs bytea)
RETURNS text[]
AS 'MODULE_PATHNAME', 'fencing_trigger_arguments'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION fencing.protect(relation regclass, token_column name,
                                scope text DEFAULT NULL, scope_column name DEFAULT NULL,
                                on_stale text DEFAULT 'error', tokens text DEFAULT 'column')
RETURNS void
AS 'MODULE_PATHNAME', 'fencing_protect'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.unprotect(relation regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'fencing_unprotect'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.protect_new_partitions(relation regclass)
RETURNS integer
AS 'MODULE_PATHNAME', 'fencing_protect_new_partitions'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.create_scope(scope text, tokens text DEFAULT 'issued',
                                     owner regrole DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'fencing_create_scope'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.grant_scope(scope text, privilege text, grantee text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'fencing_grant_scope'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.revoke_scope(scope text, privilege text, grantee text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'fencing_revoke_scope'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.alter_scope_owner(scope text, owner regrole)
RETURNS void
AS 'MODULE_PATHNAME', 'fencing_alter_scope_owner'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.alter_scope_tokens(scope text, tokens text)
RETURNS void
AS 'MODULE_PATHNAME', 'fencing_alter_scope_tokens'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.may_read(scope text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'fencing_may_read'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION fencing.acquire_lease(scope text, holder text, ttl interval,
    OUT granted boolean, OUT term bigint, OUT lease_holder text, OUT expires_at timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'fencing_acquire_lease'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.renew_lease(scope text, holder text, term bigint, ttl interval,
    OUT renewed boolean, OUT expires_at timestamptz,
    OUT lease_holder text, OUT lease_term bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'fencing_renew_lease'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.release_lease(scope text, holder text, term bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'fencing_release_lease'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION fencing.scope_counters(
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

CREATE OR REPLACE FUNCTION fencing.table_counters(
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

CREATE OR REPLACE FUNCTION fencing.last_rejection_events(
    OUT by text, OUT scope text, OUT relation oid, OUT kind text, OUT sqlstate text,
    OUT occurred_at timestamptz, OUT token bigint, OUT mark bigint, OUT declared bigint,
    OUT role text, OUT application_name text, OUT client text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'fencing_last_rejection_events'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION fencing.stats_info(OUT enabled boolean, OUT entries bigint,
                                   OUT max_entries integer, OUT untracked bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'fencing_stats_info'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION fencing.stats_reset()
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'fencing_stats_reset'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Marks kept in shared memory for every backend (src/marks/shared_marks.c),
-- when the library is preloaded.
CREATE FUNCTION fencing.shared_marks_info(OUT capacity bigint, OUT entries bigint,
                                          OUT hits bigint, OUT fills bigint,
                                          OUT forgets bigint, OUT resets bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'fencing_shared_marks_info'
LANGUAGE C VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION fencing.shared_marks_info() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fencing.shared_marks_info() TO pg_monitor;
COMMENT ON FUNCTION fencing.shared_marks_info() IS
'The marks kept in shared memory for every backend (fencing.shared_marks; fencing preloaded), for superusers and pg_monitor: capacity (0: none kept), entries held now (all databases), and since the server started: hits (a backend used a mark another read), fills, forgets (messages that made a set of entries forget a scope) and resets (every entry forgotten at once).';

-- Marks of a Citus cluster (src/state/cluster_marks.c, src/marks/cluster_apply.c):
-- fencing.distribute_marks() makes fencing.cluster_marks, a reference table
-- with a copy on every node; the coordinator writes each change of a
-- scope's row into it in the changing transaction, and the trigger on
-- each node's copy takes that node's exclusive scope lock and writes the
-- node's own row.  Made outside the extension's script: Citus distributes
-- no table whose trigger belongs to an extension.
CREATE FUNCTION fencing.apply_cluster_mark()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fencing_apply_cluster_mark'
LANGUAGE C;
-- Not API: a trigger made by hand on another table would raise any scope
-- (it refuses to act anywhere but on fencing.cluster_marks, too).
REVOKE ALL ON FUNCTION fencing.apply_cluster_mark() FROM PUBLIC;
COMMENT ON FUNCTION fencing.apply_cluster_mark() IS
'Trigger function of fencing.cluster_marks on each node of a Citus cluster: takes the scope''s lock exclusively (waits for the node''s writers of the scope) and makes the node''s row of the scope what the coordinator fed.';

CREATE FUNCTION fencing.distribute_marks()
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    fed bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'citus') THEN
        RAISE EXCEPTION 'fencing.distribute_marks() needs the citus extension in this database'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Marks are distributed on a Citus cluster only; a single node keeps its own.';
    END IF;
    IF (SELECT groupid FROM pg_catalog.pg_dist_local_group) OPERATOR(pg_catalog.<>) 0 THEN
        RAISE EXCEPTION 'fencing.distribute_marks() runs on the Citus coordinator only'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'This node is a worker: it takes its marks from the coordinator.';
    END IF;
    IF pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.<>) 'read committed' THEN
        RAISE EXCEPTION 'fencing.distribute_marks() runs in READ COMMITTED only'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'It must read every scope as committed after it has locked fencing.scopes.';
    END IF;
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
REVOKE ALL ON FUNCTION fencing.distribute_marks() FROM PUBLIC;
COMMENT ON FUNCTION fencing.distribute_marks() IS
'On the coordinator of a Citus cluster (superuser): makes fencing.cluster_marks, a reference table, and feeds it every scope; from then on scopes (marks, owners, grants) change only on the coordinator, for every node at once, and no write raises a mark or creates a scope. Run again to feed every scope again (after a node was added). Returns the number of scopes fed.';
-- Citus (issue 18): the event trigger also gives the shards of a table
-- distributed before protect() their TRUNCATE fence; it now recognises a
-- shard's row trigger, which Citus names zz_fence_row_<shard id>.
CREATE OR REPLACE FUNCTION fencing.fence_new_partitions()
RETURNS event_trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    root regclass;
BEGIN
    FOR root IN
        -- a plain table has no partition root: it is its own
        SELECT DISTINCT coalesce(pg_partition_root(c.objid), c.objid::regclass)
          FROM pg_event_trigger_ddl_commands() AS c
         WHERE c.classid = 'pg_class'::regclass
           AND c.object_type = 'table'
    LOOP
        -- only trees where some table is protected
        IF EXISTS (SELECT 1
                     FROM (SELECT root AS relid
                           UNION ALL
                           SELECT tree.relid FROM pg_partition_tree(root) AS tree) AS p
                     JOIN pg_trigger tg ON tg.tgrelid = p.relid
                    WHERE (tg.tgname IN ('zz_fence_truncate', 'zz_fence_row')
                           -- a Citus shard's: named <name>_<shard id>
                           OR tg.tgname LIKE 'zz\_fence\_row\_%')
                      AND tg.tgfoid = 'fencing.fence_trigger()'::regprocedure) THEN
            PERFORM fencing.protect_new_partitions(root);
        END IF;
    END LOOP;
END
$fn$;

-- fencing.terms loses its index on epoch alone: nothing of the extension
-- reads terms by epoch without their scope (the primary key serves the
-- look-ups), and each term issued (a takeover, a lease grant) wrote an
-- entry in it.
DROP INDEX fencing.terms_epoch_idx;
