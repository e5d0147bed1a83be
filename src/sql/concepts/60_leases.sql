-- 60_leases.sql: leases inside Postgres.
-- A lease says who should lead a scope, judged by the database server's clock
-- alone; granting one issues a new term through fence_next_epoch(), so the
-- previous holder is fenced the moment the grant commits.  The lease is only
-- advisory: the fence (terms, marks, the trigger) stays the safety, and a
-- lease whose term is below the scope's mark is not live.
-- The lease functions check the privilege of the role that calls them first
-- (lead, 50_security.sql), and acquire_lease() creates a missing scope for
-- it; they write the lease table themselves, in C.

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
-- rows of a scope only for those who may read it (50_security.sql)
ALTER TABLE fencing.leases ENABLE ROW LEVEL SECURITY;
CREATE POLICY may_read ON fencing.leases FOR SELECT USING (fencing.may_read(scope));

-- A lease is fenced when a higher term was issued, or a higher token written.
CREATE FUNCTION fencing.lease_is_fenced(lease fencing.leases)
RETURNS boolean
LANGUAGE sql VOLATILE PARALLEL RESTRICTED
AS $fn$
    SELECT lease.term OPERATOR(pg_catalog.<>) 0
       AND COALESCE((fencing.committed_mark(lease.scope) OPERATOR(pg_catalog.>) lease.term), false)
$fn$;
COMMENT ON FUNCTION fencing.lease_is_fenced(fencing.leases) IS
'Whether a lease''s term has been fenced: the scope''s committed mark is above it (a higher term was issued, or a higher token written).';

-- A lease is live until it expires or is released (server clock only), and
-- while its term is not fenced.
CREATE FUNCTION fencing.lease_is_live(lease fencing.leases)
RETURNS boolean
LANGUAGE sql VOLATILE PARALLEL RESTRICTED
AS $fn$
    SELECT lease.released_at IS NULL
       AND lease.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp()
       AND NOT fencing.lease_is_fenced(lease)
$fn$;
COMMENT ON FUNCTION fencing.lease_is_live(fencing.leases) IS
'Whether a lease is live now: not released, not expired by the server''s clock, and its term not fenced by a higher mark.';

-- The lease functions, in C (src/leases/lease.c).  Each checks its
-- arguments, then the lead privilege of the calling role on the scope, then
-- queues on the scope's lease lock; under it the lease row and the scope's
-- mark are read fresh, so a lease whose term is fenced is not live.
CREATE FUNCTION fencing.acquire_lease(scope text, holder text, ttl interval,
    OUT granted boolean, OUT term bigint, OUT lease_holder text, OUT expires_at timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'fencing_acquire_lease'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.acquire_lease(text, text, interval) IS
'Grants the scope''s lease when it is free or expired, with a new term (the previous holder is fenced); when another holder''s lease is live, grants nothing and says who holds it until when. A holder asking again for its live lease keeps its term. Needs the lead privilege on the scope.';

CREATE FUNCTION fencing.renew_lease(scope text, holder text, term bigint, ttl interval,
    OUT renewed boolean, OUT expires_at timestamptz,
    OUT lease_holder text, OUT lease_term bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'fencing_renew_lease'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.renew_lease(text, text, bigint, interval) IS
'Extends the lease for the holder of the current term while it has not expired; anything else changes nothing, returns renewed = false and who holds the lease now, if anyone. Needs the lead privilege on the scope.';

CREATE FUNCTION fencing.release_lease(scope text, holder text, term bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'fencing_release_lease'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.release_lease(text, text, bigint) IS
'Ends the live lease of this holder and term at once, so the next acquire gets a new term; anything else changes nothing and returns false. Needs the lead privilege on the scope.';

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
       s.mark,
       (l.term OPERATOR(pg_catalog.<>) 0
           AND COALESCE((s.mark OPERATOR(pg_catalog.>) l.term), false)) AS fenced
FROM fencing.leases l
LEFT JOIN fencing.scopes s ON s.scope OPERATOR(pg_catalog.=) l.scope;
COMMENT ON VIEW fencing.lease_status IS 'Every scope''s lease: holder, term, acquired at, expires at, whether it is live, how many takeovers, the scope''s mark, and whether the holder is fenced (the mark is above its term: it is no longer live).';
GRANT SELECT ON fencing.lease_status TO PUBLIC;
DO $invoker$
BEGIN
    -- the view reads as its caller, so the row security policies apply (PG 15+)
    IF pg_catalog.current_setting('server_version_num')::pg_catalog.int4 OPERATOR(pg_catalog.>=) 150000 THEN
        ALTER VIEW fencing.lease_status SET (security_invoker = true);
    END IF;
END
$invoker$;
