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
            'WHEN (fencing.raise_pending()) EXECUTE FUNCTION fencing.fence_trigger(%s)',
            t.rel,
            (SELECT pg_catalog.string_agg(pg_catalog.quote_literal(a), ', ' ORDER BY n)
               FROM pg_catalog.unnest(t.args) WITH ORDINALITY AS u(a, n)));
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
    PERFORM fencing.check_lease_args(scope, holder, ttl);
    PERFORM fencing.check_scope_privilege(scope, 'lead', 'issued');

    -- acquirers of one scope queue here, on the lease row
    INSERT INTO fencing.leases AS l (scope, holder, term, acquired_at, renewed_at, expires_at)
    VALUES (acquire_lease.scope, '', 0, '-infinity', '-infinity', '-infinity')
    ON CONFLICT DO NOTHING;
    SELECT * INTO STRICT lease FROM fencing.leases AS l
     WHERE l.scope OPERATOR(pg_catalog.=) acquire_lease.scope FOR UPDATE;

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
-- Part 4: failover and durability (issue 8 items 1-2)
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
