-- fencing--1.1--1.2.sql: no way around the fence, and scopes with owners.
-- Every name used below is schema-qualified; nothing depends on search_path.

\echo Use "ALTER EXTENSION fencing UPDATE TO '1.2'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Part 1: the fence (issue 6): token sources, partitions, the inspection view
-- ---------------------------------------------------------------------------

-- The WHEN condition of the AFTER INSERT trigger that raises the marks an
-- INSERT ... ON CONFLICT deferred until its row was written.
CREATE FUNCTION fencing.raise_pending()
RETURNS boolean
AS 'MODULE_PATHNAME', 'raise_pending'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.raise_pending() IS
'Whether this transaction deferred the raise of a mark to the AFTER INSERT fence trigger (INSERT ... ON CONFLICT).';

-- pg_trigger.tgargs split into its arguments (any byte but NUL may be in one).
CREATE FUNCTION fencing.trigger_arguments(tgargs bytea)
RETURNS text[]
AS 'MODULE_PATHNAME', 'trigger_arguments'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION fencing.trigger_arguments(bytea) IS
'The arguments of a trigger (pg_trigger.tgargs) as a text array.';

-- protect() takes the token source: 'column' (the token column, or the
-- declared token, which wins) or 'declared' (declared tokens only: for
-- tables an ORM writes whole rows to).
DROP FUNCTION fencing.protect(regclass, name, text, name, text);
CREATE FUNCTION fencing.protect(relation regclass, token_column name,
                                scope text DEFAULT NULL, scope_column name DEFAULT NULL,
                                on_stale text DEFAULT 'error', tokens text DEFAULT 'column')
RETURNS void
AS 'MODULE_PATHNAME', 'protect'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.protect(regclass, name, text, name, text, text) IS
'Protects a table: installs the fence triggers for a token column, a fixed scope or a scope column (or neither: per-row fencing only), a policy (error or skip) and a token source (column, or declared: only tokens declared with use_token() count).';

-- Tables protected with a scope by 1.1 get the AFTER INSERT trigger.
DO $upgrade$
DECLARE
    t record;
BEGIN
    FOR t IN
        SELECT tg.tgrelid::pg_catalog.regclass AS rel,
               fencing.trigger_arguments(tg.tgargs) AS args
          FROM pg_catalog.pg_trigger tg
         WHERE tg.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure
           AND tg.tgname OPERATOR(pg_catalog.=) 'zz_fence_row'
           AND tg.tgparentid OPERATOR(pg_catalog.=) 0
    LOOP
        CONTINUE WHEN t.args[3] OPERATOR(pg_catalog.=) 'row';
        EXECUTE pg_catalog.format(
            'CREATE TRIGGER zz_fence_inserted AFTER INSERT ON %s FOR EACH ROW '
            'WHEN (fencing.raise_pending()) EXECUTE FUNCTION fencing.fence_trigger()',
            t.rel);
    END LOOP;
END
$upgrade$;

-- The view tells whether each fence works: a disabled trigger, one that
-- fires only for replication (ENABLE REPLICA), one with a WHEN condition, or
-- a partition or TRUNCATE left unfenced is not a working fence.
CREATE OR REPLACE VIEW fencing.protected_tables AS
SELECT t.tgrelid::pg_catalog.regclass AS relation,
       a.args[1]::name AS token_column,
       CASE a.args[3] WHEN 'scope' THEN a.args[4] END AS scope,
       CASE a.args[3] WHEN 'column' THEN a.args[4]::name END AS scope_column,
       a.args[2] AS on_stale,
       p.problem IS NULL AS enabled,
       CASE WHEN 'tokens=declared' OPERATOR(pg_catalog.=) ANY (a.args)
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
                               WHEN tr.tgenabled IS NULL THEN 'TRUNCATE is not fenced'
                               WHEN tr.tgenabled OPERATOR(pg_catalog.<>) ALL ('{O,A}'::"char"[])
                                    OR tr.tgqual IS NOT NULL THEN 'the TRUNCATE fence does not fire'
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
                              AND tr.tgfoid OPERATOR(pg_catalog.=) t.tgfoid) w
               WHERE w.what IS NOT NULL
               ORDER BY w.level, w.rel::pg_catalog.text
               LIMIT 1)
    END AS problem
) p
WHERE t.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure
  AND t.tgname OPERATOR(pg_catalog.=) 'zz_fence_row'
  AND t.tgparentid OPERATOR(pg_catalog.=) 0;
COMMENT ON VIEW fencing.protected_tables IS
'Tables carrying the fence trigger: token column, scope, policy, token source, and whether the fence works (enabled), or what is wrong with it (problem).';

-- The event trigger also re-checks every protected table an ALTER TABLE
-- touched (a DEFAULT added to a token column fails the ALTER at once).
CREATE OR REPLACE FUNCTION fencing.fence_new_partitions()
RETURNS event_trigger
LANGUAGE plpgsql
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
                    WHERE tg.tgname IN ('zz_fence_truncate', 'zz_fence_row')
                      AND tg.tgfoid = 'fencing.fence_trigger()'::regprocedure) THEN
            PERFORM fencing.protect_new_partitions(root);
        END IF;
    END LOOP;
END
$fn$;

-- ---------------------------------------------------------------------------
-- Part 2: scope security (issue 7): owners, privileges, per-scope clock
-- ---------------------------------------------------------------------------
-- Who may do what to a scope: see README "Security model" and
-- src/security/scope_acl.c, where every decision is made.

-- The registry: each scope's owner (a role) and where its tokens come from.
ALTER TABLE fencing.scopes ADD COLUMN owner oid, ADD COLUMN tokens text;
-- Scopes 1.1 created implicitly: owned by the extension's owner; 'issued'
-- when the clock drove them, else 'external' (an external lock service).
UPDATE fencing.scopes SET
    owner = (SELECT e.extowner FROM pg_catalog.pg_extension e
              WHERE e.extname OPERATOR(pg_catalog.=) 'fencing'),
    tokens = CASE WHEN terms_issued OPERATOR(pg_catalog.>) 0 THEN 'issued' ELSE 'external' END;
ALTER TABLE fencing.scopes
    ALTER COLUMN owner SET NOT NULL,
    ALTER COLUMN tokens SET NOT NULL,
    ADD CONSTRAINT scopes_tokens_check
        CHECK (tokens OPERATOR(pg_catalog.=) 'issued' OR tokens OPERATOR(pg_catalog.=) 'external');
COMMENT ON COLUMN fencing.scopes.owner IS 'The role that owns the scope: all privileges, grants, resets.';
COMMENT ON COLUMN fencing.scopes.tokens IS 'issued: a write raises the mark only to a term issued for the scope; external: to any higher token.';

-- Privileges granted on scopes; grantee 0 is PUBLIC.  The owner's are implicit.
CREATE TABLE fencing.scope_grants (
    scope      text COLLATE "C" NOT NULL,
    grantee    oid NOT NULL,
    privilege  text NOT NULL
               CHECK (privilege OPERATOR(pg_catalog.=) 'lead'
                      OR privilege OPERATOR(pg_catalog.=) 'write'
                      OR privilege OPERATOR(pg_catalog.=) 'read'),
    granted_by oid NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (scope, grantee, privilege)
);
COMMENT ON TABLE fencing.scope_grants IS 'Privileges on scopes (lead, write, read) granted by their owners; grantee 0 is PUBLIC.';
SELECT pg_catalog.pg_extension_config_dump('fencing.scope_grants', '');

-- A scope's terms are unique and increasing per scope, not across scopes.
ALTER TABLE fencing.terms DROP CONSTRAINT terms_pkey;
ALTER TABLE fencing.terms ADD CONSTRAINT terms_pkey PRIMARY KEY (scope, epoch);
DROP INDEX fencing.terms_scope_idx;
CREATE INDEX terms_epoch_idx ON fencing.terms (epoch);

-- 1.1 let every role use every scope: keep pre-1.2 scopes working for the
-- applications that use them, and tell the DBA to narrow it down (a WARNING:
-- CREATE/ALTER EXTENSION hide NOTICEs of extension scripts).
INSERT INTO fencing.scope_grants (scope, grantee, privilege, granted_by)
SELECT s.scope, 0, p.privilege, s.owner
  FROM fencing.scopes s
 CROSS JOIN (VALUES ('lead'), ('write'), ('read')) AS p(privilege);
DO $notice$
DECLARE
    n pg_catalog.int8;
BEGIN
    SELECT pg_catalog.count(*) INTO n FROM fencing.scopes;
    IF n OPERATOR(pg_catalog.>) 0 THEN
        RAISE WARNING USING
            MESSAGE = pg_catalog.format('%s fencing scopes created before 1.2 keep lead, write and read for PUBLIC', n),
            DETAIL = 'Any role can still issue terms, take leases and raise marks in them, as in 1.1.',
            HINT = 'Give each scope to its application and revoke PUBLIC: SELECT fencing.alter_scope_owner(scope, ''app''), fencing.revoke_scope(scope, p, ''public'') FROM fencing.scopes, unnest(ARRAY[''lead'',''write'',''read'']) AS p;';
    END IF;
END
$notice$;

CREATE FUNCTION fencing.create_scope(scope text, tokens text DEFAULT 'issued',
                                     owner regrole DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'create_scope'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
-- who may create scopes (also implicitly) is who may execute this
REVOKE ALL ON FUNCTION fencing.create_scope(text, text, regrole) FROM PUBLIC;
COMMENT ON FUNCTION fencing.create_scope(text, text, regrole) IS
'Creates a scope, owned by owner (default: the caller), whose tokens are issued (only terms of fence_next_epoch() and leases raise its mark) or external. Executing it is what allows a role to create scopes, also implicitly.';

CREATE FUNCTION fencing.grant_scope(scope text, privilege text, grantee text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'grant_scope'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.grant_scope(text, text, text) IS
'Grants lead, write or read on a scope to a role or to public; for the scope''s owner. Returns false if it was granted already.';

CREATE FUNCTION fencing.revoke_scope(scope text, privilege text, grantee text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'revoke_scope'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.revoke_scope(text, text, text) IS
'Revokes lead, write or read on a scope from a role or from public; for the scope''s owner. Returns false if there was no such grant.';

CREATE FUNCTION fencing.alter_scope_owner(scope text, owner regrole)
RETURNS void
AS 'MODULE_PATHNAME', 'alter_scope_owner'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.alter_scope_owner(text, regrole) IS
'Hands a scope over to another role; for its owner, who must be a member of the new owner role (or a superuser).';

CREATE FUNCTION fencing.alter_scope_tokens(scope text, tokens text)
RETURNS void
AS 'MODULE_PATHNAME', 'alter_scope_tokens'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.alter_scope_tokens(text, text) IS
'Switches a scope between issued and external tokens; for its owner.';

CREATE FUNCTION fencing.check_scope_privilege(scope text, privilege text,
                                              create_tokens text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'check_scope_privilege'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fencing.check_scope_privilege(text, text, text) FROM PUBLIC;
COMMENT ON FUNCTION fencing.check_scope_privilege(text, text, text) IS
'Internal, for the SECURITY DEFINER lease functions: raises 42501 unless the calling (outer) role holds the privilege on the scope; creates a missing scope when create_tokens is given.';

CREATE FUNCTION fencing.may_read(scope text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'may_read'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION fencing.may_read(text) IS
'Whether the current role may see a scope''s rows: superusers, pg_monitor and pg_read_all_stats, the owner, any grantee. The row-level security policy of the extension''s tables.';

-- Reading: rows of a scope only for those who may read it.  The extension's
-- C code and SECURITY DEFINER functions run as the tables' owner, which row
-- security does not restrict.
ALTER TABLE fencing.scopes ENABLE ROW LEVEL SECURITY;
ALTER TABLE fencing.terms ENABLE ROW LEVEL SECURITY;
ALTER TABLE fencing.leases ENABLE ROW LEVEL SECURITY;
ALTER TABLE fencing.scope_grants ENABLE ROW LEVEL SECURITY;
CREATE POLICY may_read ON fencing.scopes FOR SELECT USING (fencing.may_read(scope));
CREATE POLICY may_read ON fencing.terms FOR SELECT USING (fencing.may_read(scope));
CREATE POLICY may_read ON fencing.leases FOR SELECT USING (fencing.may_read(scope));
CREATE POLICY may_read ON fencing.scope_grants FOR SELECT USING (fencing.may_read(scope));
REVOKE ALL ON fencing.scope_grants FROM PUBLIC;
GRANT SELECT ON fencing.scopes, fencing.terms, fencing.leases, fencing.scope_grants TO PUBLIC;
DO $invoker$
BEGIN
    -- the view reads as its caller, so the policies above apply (PG 15+)
    IF pg_catalog.current_setting('server_version_num')::pg_catalog.int4 OPERATOR(pg_catalog.>=) 150000 THEN
        ALTER VIEW fencing.lease_status SET (security_invoker = true);
    END IF;
END
$invoker$;

-- The repair of a scope is its owner's: checked in C (owner or superuser).
GRANT EXECUTE ON FUNCTION fencing.reset_mark(text, bigint) TO PUBLIC;
COMMENT ON FUNCTION fencing.reset_mark(text, bigint) IS
'Sets a scope''s mark, lower if need be; the only way to lower one. For the scope''s owner or a superuser. Returns the previous mark.';
COMMENT ON FUNCTION fencing.fence_next_epoch(text, text) IS
'Issues a new term for a scope on leader takeover: strictly greater than every term of the scope and its mark, durable, and the scope''s new mark. Needs the lead privilege on the scope; creates a missing scope (tokens issued) for roles allowed to create scopes.';

-- Internal functions: not for PUBLIC.  The event trigger runs as the
-- extension owner, so that a table owner's CREATE TABLE ... PARTITION OF
-- still gives the new partition its TRUNCATE fence.
REVOKE ALL ON FUNCTION fencing.protect_new_partitions(regclass) FROM PUBLIC;
REVOKE ALL ON FUNCTION fencing.forget_cached_marks() FROM PUBLIC;
REVOKE ALL ON FUNCTION fencing.check_names(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION fencing.fence_new_partitions() FROM PUBLIC;
ALTER FUNCTION fencing.fence_new_partitions() SECURITY DEFINER;

-- The lease functions run as the extension owner: they check the privilege
-- of the role that called them first, and create a missing scope for it.
CREATE OR REPLACE FUNCTION fencing.acquire_lease(scope text, holder text, ttl interval,
    OUT granted boolean, OUT term bigint, OUT lease_holder text, OUT expires_at timestamptz)
RETURNS record
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    lease fencing.leases;
    now_ts timestamptz;
BEGIN
    -- one statement, arguments first (left to right), then the privilege
    PERFORM fencing.check_lease_args(scope, holder, ttl),
            fencing.check_scope_privilege(scope, 'lead', 'issued');

    -- acquirers of one scope queue here, on the lease row (created, once,
    -- only when this transaction does not see it)
    SELECT * INTO lease FROM fencing.leases AS l
     WHERE l.scope OPERATOR(pg_catalog.=) acquire_lease.scope FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO fencing.leases AS l (scope, holder, term, acquired_at, renewed_at, expires_at)
        VALUES (acquire_lease.scope, '', 0, '-infinity', '-infinity', '-infinity')
        ON CONFLICT DO NOTHING;
        SELECT * INTO STRICT lease FROM fencing.leases AS l
         WHERE l.scope OPERATOR(pg_catalog.=) acquire_lease.scope FOR UPDATE;
    END IF;

    IF fencing.lease_is_live(lease) THEN
        now_ts := clock_timestamp();
        IF lease.holder OPERATOR(pg_catalog.<>) acquire_lease.holder THEN
            -- live and someone else's: say so, without waiting
            granted := false;
        ELSE
            -- the holder asks again: same term, lease extended, no new term
            UPDATE fencing.leases AS l
               SET renewed_at = now_ts, expires_at = now_ts + ttl
             WHERE l.scope OPERATOR(pg_catalog.=) acquire_lease.scope
            RETURNING l.expires_at INTO lease.expires_at;
            granted := true;
        END IF;
        term := lease.term;
        lease_holder := lease.holder;
        expires_at := lease.expires_at;
        RETURN;
    END IF;

    -- free or expired: a new term; waits for the old holder's open writes
    term := fencing.fence_next_epoch(acquire_lease.scope, acquire_lease.holder);
    now_ts := clock_timestamp();
    UPDATE fencing.leases AS l
       SET holder = acquire_lease.holder, term = acquire_lease.term,
           acquired_at = now_ts, renewed_at = now_ts, expires_at = now_ts + ttl,
           released_at = NULL, grants = l.grants OPERATOR(pg_catalog.+) 1
     WHERE l.scope OPERATOR(pg_catalog.=) acquire_lease.scope
    RETURNING l.expires_at INTO expires_at;
    PERFORM fencing.count_lease_event(acquire_lease.scope, CASE WHEN lease.holder OPERATOR(pg_catalog.<>) '' AND lease.released_at IS NULL THEN 'grant_after_expiry' ELSE 'grant' END);  -- telemetry (issue 9)
    granted := true;
    lease_holder := acquire_lease.holder;
END
$fn$;

CREATE OR REPLACE FUNCTION fencing.renew_lease(scope text, holder text, term bigint, ttl interval,
    OUT renewed boolean, OUT expires_at timestamptz,
    OUT lease_holder text, OUT lease_term bigint)
RETURNS record
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM fencing.check_lease_args(scope, holder, ttl);
    IF term IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed',
            MESSAGE = 'lease term must not be null';
    END IF;
    PERFORM fencing.check_scope_privilege(scope, 'lead');
    -- only the live lease of this holder and term; an expired one is never
    -- revived (lock_held_lease: expiry is judged after any wait for the row)
    PERFORM fencing.lock_held_lease(scope, holder, term);
    UPDATE fencing.leases AS l
       SET renewed_at = clock_timestamp(), expires_at = clock_timestamp() + ttl
     WHERE l.scope OPERATOR(pg_catalog.=) renew_lease.scope
       AND l.holder OPERATOR(pg_catalog.=) renew_lease.holder
       AND l.term OPERATOR(pg_catalog.=) renew_lease.term
       AND fencing.lease_is_live(l)
    RETURNING l.expires_at INTO expires_at;
    renewed := FOUND;
    IF NOT renewed THEN
        PERFORM fencing.count_lease_event(renew_lease.scope, 'renewal_refused');  -- telemetry (issue 9)
        -- say who holds it now (NULL when the lease is expired or released)
        SELECT l.holder, l.term INTO lease_holder, lease_term
          FROM fencing.leases AS l
         WHERE l.scope OPERATOR(pg_catalog.=) renew_lease.scope
           AND fencing.lease_is_live(l);
    ELSE
        lease_holder := renew_lease.holder;
        lease_term := renew_lease.term;
    END IF;
END
$fn$;

CREATE OR REPLACE FUNCTION fencing.release_lease(scope text, holder text, term bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM fencing.check_names(scope, holder);
    IF term IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed',
            MESSAGE = 'lease term must not be null';
    END IF;
    PERFORM fencing.check_scope_privilege(scope, 'lead');
    PERFORM fencing.lock_held_lease(scope, holder, term);
    UPDATE fencing.leases AS l
       SET released_at = clock_timestamp(), expires_at = clock_timestamp()
     WHERE l.scope OPERATOR(pg_catalog.=) release_lease.scope
       AND l.holder OPERATOR(pg_catalog.=) release_lease.holder
       AND l.term OPERATOR(pg_catalog.=) release_lease.term
       AND fencing.lease_is_live(l);
    RETURN FOUND;
END
$fn$;
COMMENT ON FUNCTION fencing.acquire_lease(text, text, interval) IS
'Grants the scope''s lease when it is free or expired, with a new term (the previous holder is fenced); when another holder''s lease is live, grants nothing and says who holds it until when. A holder asking again for its live lease keeps its term. Needs the lead privilege on the scope.';
COMMENT ON FUNCTION fencing.renew_lease(text, text, bigint, interval) IS
'Extends the lease for the holder of the current term while it has not expired; anything else changes nothing, returns renewed = false and who holds the lease now, if anyone. Needs the lead privilege on the scope.';
COMMENT ON FUNCTION fencing.release_lease(text, text, bigint) IS
'Ends the live lease of this holder and term at once, so the next acquire gets a new term; anything else changes nothing and returns false. Needs the lead privilege on the scope.';

-- ---------------------------------------------------------------------------
-- Part 3: telemetry (issue 9): counters, views, log lines, retention
-- ---------------------------------------------------------------------------
-- Counters live in shared memory (src/telemetry/fence_stats.c) when fencing
-- is in shared_preload_libraries; without it the views show what the tables
-- say, with null counters and a NOTICE.  Nothing here is on the path of an
-- accepted write.

-- Called by acquire_lease and renew_lease (SECURITY DEFINER) above.
CREATE FUNCTION fencing.count_lease_event(scope text, event text)
RETURNS void
AS 'MODULE_PATHNAME', 'count_lease_event'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fencing.count_lease_event(text, text) FROM PUBLIC;
COMMENT ON FUNCTION fencing.count_lease_event(text, text) IS
'Internal, for the lease functions: counts a lease event of a scope (grant, grant_after_expiry, renewal_refused) in the shared statistics.';

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
AS 'MODULE_PATHNAME', 'scope_counters'
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
AS 'MODULE_PATHNAME', 'table_counters'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION fencing.table_counters() IS
'The shared-memory counters of every relation (partitions apart) of this database that had an event since the last reset. Read fencing.table_stats instead.';

CREATE FUNCTION fencing.last_rejection_events(
    OUT by text, OUT scope text, OUT relation oid, OUT kind text, OUT sqlstate text,
    OUT occurred_at timestamptz, OUT token bigint, OUT mark bigint, OUT declared bigint,
    OUT role text, OUT application_name text, OUT client text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'last_rejection_events'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION fencing.last_rejection_events() IS
'The last rejection of each kind per scope (by = scope) and per relation (by = table), from shared memory. Read fencing.last_rejections instead.';

CREATE FUNCTION fencing.stats_info(OUT enabled boolean, OUT entries bigint,
                                   OUT max_entries integer, OUT untracked bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'stats_info'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION fencing.stats_info() IS
'Whether statistics are collected (fencing in shared_preload_libraries), the entries in use (all databases), fencing.stats_max, and events not counted because the table was full.';

CREATE FUNCTION fencing.stats_reset()
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'stats_reset'
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
CROSS JOIN LATERAL (
    SELECT pg_catalog.count(*) AS terms_last_hour
      FROM fencing.terms t
     WHERE t.scope OPERATOR(pg_catalog.=) s.scope
       AND t.issued_at OPERATOR(pg_catalog.>)
           (pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::pg_catalog.interval)) h;
COMMENT ON VIEW fencing.scope_stats IS
'Per scope: mark, latest term, lease (lease_fenced: a lease neither released nor expired whose term is below the mark: its holder may still believe it leads), counters of rejections by kind, skips, bypasses, terms, lease grants, refused renewals and expiries since the last reset (null when fencing is not in shared_preload_libraries), terms issued in the last hour and whether that is flapping (above fencing.flapping_terms_per_hour).';

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

-- Retention of fencing.terms.  The next term of a scope is computed from
-- its row in fencing.scopes (mark, latest term) and the sequence, never from
-- fencing.terms, so deleting terms cannot lower it (I1).  Kept: the newest
-- keep_per_scope terms of each scope (at least its latest), every term at or
-- above the scope's mark (a write in an 'issued' scope may still raise the
-- mark to it: ZF003 looks it up here), the term of each lease, and every
-- term younger than older_than.
CREATE FUNCTION fencing.prune_terms(older_than interval DEFAULT '90 days',
                                    keep_per_scope integer DEFAULT 100)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    deleted pg_catalog.int8;
BEGIN
    IF older_than IS NULL OR keep_per_scope IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed',
            MESSAGE = 'older_than and keep_per_scope must not be null';
    END IF;
    IF older_than OPERATOR(pg_catalog.<) '0'::pg_catalog.interval THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'older_than must not be negative';
    END IF;
    IF keep_per_scope OPERATOR(pg_catalog.<) 1 THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = pg_catalog.format('keep_per_scope must be at least 1, not %s', keep_per_scope),
            DETAIL = 'The latest term of every scope is always kept.';
    END IF;
    -- no mark, latest term or lease moves while we decide: each of them
    -- updates its scope's row, which waits for this transaction
    PERFORM 1 FROM fencing.scopes FOR SHARE;
    PERFORM 1 FROM fencing.leases FOR SHARE;
    DELETE FROM fencing.terms AS t
     USING (SELECT r.scope, r.epoch,
                   pg_catalog.row_number() OVER (PARTITION BY r.scope ORDER BY r.epoch DESC) AS newer
              FROM fencing.terms r) AS ranked,
           fencing.scopes AS s
     WHERE ranked.scope OPERATOR(pg_catalog.=) t.scope
       AND ranked.epoch OPERATOR(pg_catalog.=) t.epoch
       AND ranked.newer OPERATOR(pg_catalog.>) keep_per_scope
       AND s.scope OPERATOR(pg_catalog.=) t.scope
       AND t.epoch OPERATOR(pg_catalog.<) s.mark
       AND t.epoch OPERATOR(pg_catalog.<) s.epoch
       AND t.issued_at OPERATOR(pg_catalog.<) (pg_catalog.now() OPERATOR(pg_catalog.-) older_than)
       AND NOT EXISTS (SELECT 1 FROM fencing.leases AS l
                        WHERE l.scope OPERATOR(pg_catalog.=) t.scope
                          AND l.term OPERATOR(pg_catalog.=) t.epoch);
    GET DIAGNOSTICS deleted = ROW_COUNT;
    RETURN deleted;
END
$fn$;
REVOKE ALL ON FUNCTION fencing.prune_terms(interval, integer) FROM PUBLIC;
COMMENT ON FUNCTION fencing.prune_terms(interval, integer) IS
'Deletes terms older than older_than from fencing.terms, keeping the newest keep_per_scope of each scope, every term at or above its mark and every lease''s term; the next term never depends on them. For the extension''s owner and superusers. Returns the number deleted.';
COMMENT ON TABLE fencing.terms IS 'Every term issued, with its holder and time. Written only by the extension; old terms are deleted only by fencing.prune_terms().';

-- ---------------------------------------------------------------------------
-- Part 4: marks, leases and health (issue 8 items 3-7)
-- ---------------------------------------------------------------------------

-- Cached marks (src/marks/mark_cache.c): a write of a row of fencing.scopes
-- makes every backend forget that scope only (1.1: every backend forgot
-- every mark at each raise), and the trigger fires ALWAYS, also under
-- session_replication_role = replica (logical replication apply, restores).
DROP TRIGGER forget_cached_marks ON fencing.scopes;
CREATE TRIGGER forget_cached_marks AFTER INSERT OR UPDATE OR DELETE
    ON fencing.scopes FOR EACH ROW EXECUTE FUNCTION fencing.forget_cached_marks();
CREATE TRIGGER forget_all_cached_marks AFTER TRUNCATE
    ON fencing.scopes FOR EACH STATEMENT EXECUTE FUNCTION fencing.forget_cached_marks();
ALTER TABLE fencing.scopes ENABLE ALWAYS TRIGGER forget_cached_marks;
ALTER TABLE fencing.scopes ENABLE ALWAYS TRIGGER forget_all_cached_marks;
COMMENT ON FUNCTION fencing.forget_cached_marks() IS
'Trigger function on fencing.scopes: makes every backend forget the cached marks of the scopes a committed write changed (all of them for TRUNCATE).';

-- External tokens fence at takeover: the new holder raises the mark at once.
CREATE FUNCTION fencing.takeover(scope text, token bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'takeover'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.takeover(text, bigint) IS
'Raises a scope''s mark to the token of its new holder at once (an etcd lock key''s mod_revision, a ZooKeeper czxid, a Consul LockIndex, a Kubernetes leaseTransitions), so the previous holder is fenced before the new one writes. Waits for in-flight writers of the scope, commits durably, needs the write privilege; a token below the mark fails with ZF001. Returns the previous mark.';

-- Leases agree with the fence: a lease whose term is below the scope's mark
-- (a higher term was issued, or a higher token written) is not live.
CREATE FUNCTION fencing.committed_mark(scope text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'committed_mark'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION fencing.committed_mark(text) IS
'The committed mark of a scope, read with a fresh snapshot and no lock; NULL for an unknown scope or one the caller may not read.';

CREATE FUNCTION fencing.lease_is_fenced(lease fencing.leases)
RETURNS boolean
LANGUAGE sql VOLATILE PARALLEL RESTRICTED
AS $fn$
    SELECT lease.term OPERATOR(pg_catalog.<>) 0
       AND COALESCE((fencing.committed_mark(lease.scope) OPERATOR(pg_catalog.>) lease.term), false)
$fn$;
COMMENT ON FUNCTION fencing.lease_is_fenced(fencing.leases) IS
'Whether a lease''s term has been fenced: the scope''s committed mark is above it (a higher term was issued, or a higher token written).';

CREATE OR REPLACE FUNCTION fencing.lease_is_live(lease fencing.leases)
RETURNS boolean
LANGUAGE sql VOLATILE PARALLEL RESTRICTED
AS $fn$
    SELECT lease.released_at IS NULL
       AND lease.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp()
       AND NOT fencing.lease_is_fenced(lease)
$fn$;
COMMENT ON FUNCTION fencing.lease_is_live(fencing.leases) IS
'Whether a lease is live now: not released, not expired by the server''s clock, and its term not fenced by a higher mark.';

CREATE OR REPLACE VIEW fencing.lease_status AS
SELECT l.scope,
       NULLIF(l.holder, '') AS holder,
       NULLIF(l.term, 0) AS term,
       NULLIF(l.acquired_at, '-infinity') AS acquired_at,
       NULLIF(l.renewed_at, '-infinity') AS renewed_at,
       NULLIF(l.expires_at, '-infinity') AS expires_at,
       l.released_at,
       fencing.lease_is_live(l) AS live,
       GREATEST(l.grants OPERATOR(pg_catalog.-) 1, 0) AS takeovers,
       s.mark,
       (l.term OPERATOR(pg_catalog.<>) 0
           AND COALESCE((s.mark OPERATOR(pg_catalog.>) l.term), false)) AS fenced
FROM fencing.leases l
LEFT JOIN fencing.scopes s ON s.scope OPERATOR(pg_catalog.=) l.scope;
COMMENT ON VIEW fencing.lease_status IS 'Every scope''s lease: holder, term, acquired at, expires at, whether it is live, how many takeovers, the scope''s mark, and whether the holder is fenced (the mark is above its term: it is no longer live).';
DO $invoker$
BEGIN
    -- CREATE OR REPLACE VIEW reset the view's options
    IF pg_catalog.current_setting('server_version_num')::pg_catalog.int4 OPERATOR(pg_catalog.>=) 150000 THEN
        ALTER VIEW fencing.lease_status SET (security_invoker = true);
    END IF;
END
$invoker$;

-- Health: one row per finding, for a DBA to run and alert on.
CREATE VIEW fencing.health AS
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
    SELECT CASE WHEN s.mark OPERATOR(pg_catalog.>=) 4611686018427387904 THEN 'critical' ELSE 'warning' END,
           'mark far above the clock', s.scope,
           CASE WHEN s.mark OPERATOR(pg_catalog.>=) 4611686018427387904
                THEN pg_catalog.format('scope %s has mark %s, near the largest bigint: few terms are left (ZF004 at the end)', s.scope, s.mark)
                ELSE pg_catalog.format('scope %s issues terms, but its mark %s is far above its latest term %s: the mark was reset or written directly, not by a term',
                                       s.scope, s.mark, s.epoch)
           END,
           pg_catalog.format('If no writer holds a token that high, its owner repairs it: SELECT fencing.reset_mark(%L, %s);',
                             s.scope, COALESCE(s.epoch, 0))
      FROM fencing.scopes s
     WHERE s.mark OPERATOR(pg_catalog.>=) 4611686018427387904
        OR (s.tokens OPERATOR(pg_catalog.=) 'issued'
            AND s.mark OPERATOR(pg_catalog.>) 1000000
            AND s.mark OPERATOR(pg_catalog.>) (1000 OPERATOR(pg_catalog.*) GREATEST(s.epoch, 1)))
) f
ORDER BY CASE f.severity WHEN 'critical' THEN 0 ELSE 1 END, f."check", f.object;
COMMENT ON VIEW fencing.health IS
'Findings that weaken fencing, one row each: severity (critical, warning), check, object, detail, action. Unsafe settings, replicas without a synchronous standby, a missing synchronous standby, protected tables whose fence does not work, unfenced inheritance children, leases held by fenced holders, marks far above the clock. No rows: nothing found. Readable by pg_monitor.';
REVOKE ALL ON fencing.health FROM PUBLIC;
GRANT SELECT ON fencing.health TO pg_monitor;

-- ---------------------------------------------------------------------------
-- Part 5: failover and durability (issue 8 items 1-2)
-- ---------------------------------------------------------------------------
-- Terms carry the timeline: fence_next_epoch() never issues a term below
-- (timeline - 1) * 2^40, so a promoted standby's terms are above every term
-- of the timelines before it (src/clock/term_band.c).  Terms issued on
-- timeline 1, before 1.2 too, are below 2^40 and keep their place.

CREATE FUNCTION fencing.clock_timeline(OUT timeline bigint, OUT term_floor bigint,
                                       OUT term_limit bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'clock_timeline'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION fencing.clock_timeline() IS
'The timeline of this server (the replayed one on a standby) and its band of terms: no term issued on it is below term_floor; a scope whose mark or latest term is at or above term_limit is outside the band, and its terms are not protected against reissue by an asynchronous failover.';
