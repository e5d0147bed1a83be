-- fencing--1.2--1.3.sql: lease calls in C.
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
