-- fencing--1.1--1.2.sql: no way around the fence, and scopes with owners.
-- Every name used below is schema-qualified; nothing depends on search_path.

\echo Use "ALTER EXTENSION fencing UPDATE TO '1.2'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Part 1: the fence (issue 6): token sources, partitions, the inspection view
-- ---------------------------------------------------------------------------

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
