-- fencing--1.0--1.1.sql: leases inside Postgres.
-- A lease says who should lead a scope, judged by the database server's clock
-- alone; granting one issues a new term through fence_next_epoch(), so the
-- previous holder is fenced the moment the grant commits.  The lease is only
-- advisory: the fence (terms, marks, the trigger) stays the safety.
-- Every name used below is schema-qualified; nothing depends on search_path.

\echo Use "ALTER EXTENSION fencing UPDATE TO '1.1'" to load this file. \quit

CREATE TABLE fencing.leases (
    scope       text COLLATE "C" PRIMARY KEY,
    holder      text NOT NULL,
    term        bigint NOT NULL,
    acquired_at timestamptz NOT NULL,
    renewed_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    released_at timestamptz,
    grants      bigint NOT NULL DEFAULT 0
);
COMMENT ON TABLE fencing.leases IS 'The lease of each scope: holder, term and expiry. Written only by the lease functions.';
SELECT pg_catalog.pg_extension_config_dump('fencing.leases', '');
REVOKE ALL ON fencing.leases FROM PUBLIC;
GRANT SELECT ON fencing.leases TO PUBLIC;

-- A lease is live until it expires or is released (server clock only).
CREATE FUNCTION fencing.lease_is_live(lease fencing.leases)
RETURNS boolean
LANGUAGE sql VOLATILE PARALLEL SAFE
AS $fn$
    SELECT lease.released_at IS NULL
       AND lease.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp()
$fn$;
COMMENT ON FUNCTION fencing.lease_is_live(fencing.leases) IS
'Whether a lease is live now: not released, and not expired by the server''s clock.';

CREATE FUNCTION fencing.check_names(scope text, holder text)
RETURNS void
AS 'MODULE_PATHNAME', 'check_names'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION fencing.check_names(text, text) IS
'Raises the error fence_next_epoch() would for a bad scope name or holder.';

-- Input checks shared by the lease functions.
CREATE FUNCTION fencing.check_lease_args(scope text, holder text, ttl interval)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    -- the same checks as fence_next_epoch()'s, in C
    PERFORM fencing.check_names(scope, holder);
    IF ttl IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed',
            MESSAGE = 'lease ttl must not be null';
    END IF;
    IF ttl < interval '1 millisecond' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('lease ttl of %s seconds is too short', extract(epoch FROM ttl)::float8),
            DETAIL = 'A lease lasts at least 1 millisecond.';
    END IF;
    IF ttl > interval '1 day' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('lease ttl of %s seconds is too long', extract(epoch FROM ttl)::float8),
            DETAIL = 'A lease lasts at most 1 day.',
            HINT = 'Renew a shorter lease instead: a long one keeps a dead leader in place.';
    END IF;
END
$fn$;
REVOKE ALL ON FUNCTION fencing.check_lease_args(text, text, interval) FROM PUBLIC;

CREATE FUNCTION fencing.acquire_lease(scope text, holder text, ttl interval,
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
COMMENT ON FUNCTION fencing.acquire_lease(text, text, interval) IS
'Grants the scope''s lease when it is free or expired, with a new term (the previous holder is fenced); when another holder''s lease is live, grants nothing and says who holds it until when. A holder asking again for its live lease keeps its term.';

-- Lock the live lease of this holder and term, if there is one.  A caller
-- that then updates it re-checks expiry: a lock that had to wait behind
-- another transaction may be granted after the lease ran out, and
-- SELECT ... FOR UPDATE does not re-check its condition then.
CREATE FUNCTION fencing.lock_held_lease(scope text, holder text, term bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
AS $fn$
BEGIN
    -- plpgsql, not sql: its plan is kept for the session (a non-inlined SQL
    -- function is planned at every call); every name is qualified
    PERFORM 1 FROM fencing.leases AS l
     WHERE l.scope OPERATOR(pg_catalog.=) lock_held_lease.scope
       AND l.holder OPERATOR(pg_catalog.=) lock_held_lease.holder
       AND l.term OPERATOR(pg_catalog.=) lock_held_lease.term
       AND fencing.lease_is_live(l)
       FOR UPDATE;
    RETURN FOUND;
END
$fn$;
REVOKE ALL ON FUNCTION fencing.lock_held_lease(text, text, bigint) FROM PUBLIC;

CREATE FUNCTION fencing.renew_lease(scope text, holder text, term bigint, ttl interval,
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
COMMENT ON FUNCTION fencing.renew_lease(text, text, bigint, interval) IS
'Extends the lease for the holder of the current term while it has not expired; anything else changes nothing, returns renewed = false and who holds the lease now, if anyone.';

CREATE FUNCTION fencing.release_lease(scope text, holder text, term bigint)
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
COMMENT ON FUNCTION fencing.release_lease(text, text, bigint) IS
'Ends the live lease of this holder and term at once, so the next acquire gets a new term; anything else changes nothing and returns false.';

CREATE VIEW fencing.lease_status AS
SELECT l.scope,
       NULLIF(l.holder, '') AS holder,
       NULLIF(l.term, 0) AS term,
       NULLIF(l.acquired_at, '-infinity') AS acquired_at,
       NULLIF(l.renewed_at, '-infinity') AS renewed_at,
       NULLIF(l.expires_at, '-infinity') AS expires_at,
       l.released_at,
       fencing.lease_is_live(l) AS live,
       GREATEST(l.grants OPERATOR(pg_catalog.-) 1, 0) AS takeovers,
       s.mark
FROM fencing.leases l
LEFT JOIN fencing.scopes s ON s.scope OPERATOR(pg_catalog.=) l.scope;
COMMENT ON VIEW fencing.lease_status IS 'Every scope''s lease: holder, term, acquired at, expires at, whether it is live, how many takeovers, and the scope''s mark.';
GRANT SELECT ON fencing.lease_status TO PUBLIC;

-- Partitions created or attached after protect() get the row trigger from
-- Postgres (row triggers are cloned) but not the TRUNCATE trigger (statement
-- triggers are not): this event trigger adds it, with the parent's arguments.
CREATE FUNCTION fencing.protect_new_partitions(relation regclass)
RETURNS integer
AS 'MODULE_PATHNAME', 'protect_new_partitions'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.protect_new_partitions(regclass) IS
'Gives every partition below a protected partitioned table the TRUNCATE fence trigger it lacks; returns how many it added. Run by an event trigger after CREATE TABLE and ALTER TABLE.';

CREATE FUNCTION fencing.fence_new_partitions()
RETURNS event_trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    root regclass;
BEGIN
    FOR root IN
        SELECT DISTINCT pg_partition_root(c.objid)
          FROM pg_event_trigger_ddl_commands() AS c
         WHERE c.classid = 'pg_class'::regclass
           AND c.object_type = 'table'
    LOOP
        -- only trees where some partitioned table is protected
        IF EXISTS (SELECT 1
                     FROM pg_partition_tree(root) AS p
                     JOIN pg_trigger tg ON tg.tgrelid = p.relid
                    WHERE NOT p.isleaf
                      AND tg.tgname = 'zz_fence_truncate'
                      AND tg.tgfoid = 'fencing.fence_trigger()'::regprocedure) THEN
            PERFORM fencing.protect_new_partitions(root);
        END IF;
    END LOOP;
END
$fn$;
COMMENT ON FUNCTION fencing.fence_new_partitions() IS
'Event trigger function: new partitions of protected tables get the TRUNCATE fence trigger.';

CREATE EVENT TRIGGER fencing_new_partitions ON ddl_command_end
    WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE')
    EXECUTE FUNCTION fencing.fence_new_partitions();

-- Backends cache the marks they read; a write to fencing.scopes by anything
-- but the extension must make them forget (see src/marks/mark_cache.c).
CREATE FUNCTION fencing.forget_cached_marks()
RETURNS trigger
AS 'MODULE_PATHNAME', 'forget_cached_marks'
LANGUAGE C;
COMMENT ON FUNCTION fencing.forget_cached_marks() IS
'Trigger function: makes every backend forget its cached marks when a write to fencing.scopes commits.';
CREATE TRIGGER forget_cached_marks AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON fencing.scopes FOR EACH STATEMENT EXECUTE FUNCTION fencing.forget_cached_marks();
