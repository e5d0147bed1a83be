-- 20_marks.sql: scopes and their high-water marks.
-- One row per scope in fencing.scopes: its mark (the highest token
-- accepted), its latest term, its owner and where its tokens come from.
-- Marks only rise (I2): the trigger (40_trigger.sql), fence_next_epoch()
-- and takeover() raise them; reset_mark() is the one way to lower one.
-- Locking, reading and raising marks: src/marks/.

-- Scope ids: each scope gets one when it is created, and is locked by it
-- (src/marks/scope_lock.c), never by its name.
CREATE SEQUENCE fencing.scope_ids AS bigint MINVALUE 1 NO CYCLE;
COMMENT ON SEQUENCE fencing.scope_ids IS 'The ids of scopes: one for each scope when it is created.';
-- kept by pg_dump with the scopes' rows
SELECT pg_catalog.pg_extension_config_dump('fencing.scope_ids', '');
REVOKE ALL ON fencing.scope_ids FROM PUBLIC;

CREATE TABLE fencing.scopes (
    scope           text COLLATE "C" PRIMARY KEY,
    mark            bigint NOT NULL CHECK (mark OPERATOR(pg_catalog.>=) 0),
    mark_raised_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    epoch           bigint,
    holder          text,
    epoch_issued_at timestamptz,
    terms_issued    bigint NOT NULL DEFAULT 0,
    owner           oid NOT NULL,
    tokens          text NOT NULL,
    id              bigint NOT NULL DEFAULT pg_catalog.nextval('fencing.scope_ids'::pg_catalog.regclass),
    CHECK (pg_catalog.octet_length(scope) OPERATOR(pg_catalog.<=) 200
           AND scope OPERATOR(pg_catalog.<>) ''),
    CONSTRAINT scopes_tokens_check
        CHECK (tokens OPERATOR(pg_catalog.=) 'issued' OR tokens OPERATOR(pg_catalog.=) 'external')
);
COMMENT ON TABLE fencing.scopes IS 'Per-scope high-water mark and latest term. Written only by the extension.';
COMMENT ON COLUMN fencing.scopes.owner IS 'The role that owns the scope: all privileges, grants, resets.';
COMMENT ON COLUMN fencing.scopes.id IS 'The number the scope is locked by, drawn from fencing.scope_ids when the scope is created: no name collides with it.';
COMMENT ON COLUMN fencing.scopes.tokens IS 'issued: a write raises the mark only to a term issued for the scope; external: to any higher token.';
-- kept by pg_dump, so a dump/restore keeps marks
SELECT pg_catalog.pg_extension_config_dump('fencing.scopes', '');
-- readable row by row as the scope's privileges say (50_security.sql)
REVOKE ALL ON fencing.scopes FROM PUBLIC;
GRANT SELECT ON fencing.scopes TO PUBLIC;

-- The repair of a scope is its owner's: checked in C (owner or superuser).
-- EXECUTE is granted to PUBLIC explicitly (1.0 revoked it; upgraded installs
-- have this ACL, and test 99_upgrade_objects compares ACLs).
CREATE FUNCTION fencing.reset_mark(scope text, mark bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_reset_mark'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fencing.reset_mark(text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fencing.reset_mark(text, bigint) TO PUBLIC;
COMMENT ON FUNCTION fencing.reset_mark(text, bigint) IS
'Sets a scope''s mark, lower if need be; the only way to lower one. For the scope''s owner or a superuser. Returns the previous mark.';

-- External tokens fence at takeover: the new holder raises the mark at once.
CREATE FUNCTION fencing.takeover(scope text, token bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_takeover'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.takeover(text, bigint) IS
'Raises a scope''s mark to the token of its new holder at once (an etcd lock key''s mod_revision, a ZooKeeper czxid, a Consul LockIndex, a Kubernetes leaseTransitions), so the previous holder is fenced before the new one writes. Waits for in-flight writers of the scope, commits durably, needs the write privilege; a token below the mark fails with ZF001. Returns the previous mark.';

-- After a failover that lost commits (src/marks/failover_fence.c): lift the
-- marks of 'issued' scopes to the floor of the server's timeline, so every
-- term of the timelines before it is fenced before any new term is taken.
-- For the failover manager's promotion hook; a superuser's by default.
CREATE FUNCTION fencing.fence_older_timelines(max_scopes integer DEFAULT 1000)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_fence_older_timelines'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fencing.fence_older_timelines(integer) FROM PUBLIC;
COMMENT ON FUNCTION fencing.fence_older_timelines(integer) IS
'After a promotion: raises the mark of every ''issued'' scope below the floor of this server''s timeline (fencing.clock_timeline().term_floor) to that floor, so that a writer holding a term of an earlier timeline is rejected before the new leader takes its term. Each scope as its owner''s raise: waits for its in-flight writers, commits durably. At most max_scopes per call (call again until it returns 0); returns how many marks it raised. ''external'' scopes are left to takeover().';

-- Leases agree with the fence: a lease whose term is below the scope's mark
-- (a higher term was issued, or a higher token written) is not live.
CREATE FUNCTION fencing.committed_mark(scope text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_committed_mark'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION fencing.committed_mark(text) IS
'The committed mark of a scope, read with a fresh snapshot and no lock; NULL for an unknown scope or one the caller may not read.';

-- Cached marks (src/marks/mark_cache.c): a write of a row of fencing.scopes
-- makes every backend forget that scope only, and the triggers fire ALWAYS,
-- also under session_replication_role = replica (logical replication apply,
-- restores).
CREATE FUNCTION fencing.forget_cached_marks()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fencing_forget_cached_marks'
LANGUAGE C;
REVOKE ALL ON FUNCTION fencing.forget_cached_marks() FROM PUBLIC;
COMMENT ON FUNCTION fencing.forget_cached_marks() IS
'Trigger function on fencing.scopes and fencing.scope_grants: makes every backend forget what it cached of the scopes a committed write changed, marks and privileges (all of them for TRUNCATE).';
CREATE TRIGGER forget_cached_marks AFTER INSERT OR UPDATE OR DELETE
    ON fencing.scopes FOR EACH ROW EXECUTE FUNCTION fencing.forget_cached_marks();
CREATE TRIGGER forget_all_cached_marks AFTER TRUNCATE
    ON fencing.scopes FOR EACH STATEMENT EXECUTE FUNCTION fencing.forget_cached_marks();
ALTER TABLE fencing.scopes ENABLE ALWAYS TRIGGER forget_cached_marks;
ALTER TABLE fencing.scopes ENABLE ALWAYS TRIGGER forget_all_cached_marks;
