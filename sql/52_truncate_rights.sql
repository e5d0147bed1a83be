-- 52_truncate_rights: the TRUNCATE fence reads the truncated table without
-- running anything of the table's owner with other rights.  In 1.3 it read
-- the table through SPI as the extension's owner (a superuser): planning
-- that query evaluated the IMMUTABLE functions of the table's index
-- predicates with superuser rights, so any role that could create a table
-- became superuser.  The fence still rejects stale tokens at TRUNCATE, per
-- row and per scope, on partitioned tables too.
\set SHOW_CONTEXT never
\set su :USER

-- a role with no fencing grant at all, with a schema of its own
CREATE ROLE regress_truncator LOGIN;
CREATE SCHEMA truncator AUTHORIZATION regress_truncator;
SET ROLE regress_truncator;
SET search_path = truncator;
CREATE TABLE ran_as (who name, super boolean, became_super boolean);
-- VOLATILE: records who runs it, and tries to make its role a superuser
CREATE FUNCTION escalate() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    ok boolean := true;
BEGIN
    BEGIN
        EXECUTE 'ALTER ROLE regress_truncator SUPERUSER';
    EXCEPTION WHEN OTHERS THEN
        ok := false;
    END;
    INSERT INTO truncator.ran_as
        SELECT current_user, rolsuper, ok FROM pg_catalog.pg_roles WHERE rolname = current_user;
    RETURN true;
END
$$;
-- IMMUTABLE: the planner folds it wherever it sees it, in an index predicate
CREATE FUNCTION own_immutable_fn() RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN truncator.escalate();
END
$$;

-- per-row fencing, and a scope column
CREATE TABLE rows_t (id int, tok bigint);
SELECT fencing.protect('rows_t', 'tok');
CREATE INDEX rows_t_trap ON rows_t (id) WHERE own_immutable_fn();
CREATE TABLE scoped_t (id int, scope text, tok bigint);
SELECT fencing.protect('scoped_t', 'tok', scope_column => 'scope');
CREATE INDEX scoped_t_trap ON scoped_t (id) WHERE own_immutable_fn();
CREATE INDEX scoped_t_expr ON scoped_t ((scope || own_immutable_fn()::text));
RESET ROLE;
RESET search_path;

-- a new session: no index predicate cached yet
\c - :su
SET ROLE regress_truncator;
BEGIN;
SELECT fencing.use_token(1);
TRUNCATE truncator.rows_t;
TRUNCATE truncator.scoped_t;
COMMIT;
RESET ROLE;
\c - :su
SET ROLE regress_truncator;
BEGIN;
SELECT fencing.use_token(1);
TRUNCATE truncator.scoped_t, truncator.rows_t;
COMMIT;
RESET ROLE;
-- the role is no superuser, and its function ran as nobody else
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_truncator';
SELECT DISTINCT who COLLATE "C", super, became_super FROM truncator.ran_as ORDER BY 1;

-- the fence still holds at TRUNCATE: per row, the largest token in the table
CREATE TABLE per_row (id int, tok bigint);
SELECT fencing.protect('per_row', 'tok');
INSERT INTO per_row VALUES (1, 5), (2, 7);
-- a row without a token (written under the privileged bypass) counts for nothing
BEGIN;
SET LOCAL fencing.bypass = on;
INSERT INTO per_row VALUES (3, NULL);
COMMIT;
BEGIN;
SELECT fencing.use_token(6);
TRUNCATE per_row;
ROLLBACK;
BEGIN;
TRUNCATE per_row;
ROLLBACK;
BEGIN;
SELECT fencing.use_token(7);
TRUNCATE per_row;
COMMIT;
SELECT count(*) FROM per_row;

-- per scope: every scope a row names, char(n) padding trimmed
SELECT fencing.create_scope('trunc-a', 'external'), fencing.create_scope('trunc-b', 'external');
SELECT fencing.takeover('trunc-a', 5), fencing.takeover('trunc-b', 9);
CREATE TABLE per_scope (id int, scope char(10), tok bigint);
SELECT fencing.protect('per_scope', 'tok', scope_column => 'scope');
BEGIN;
SELECT fencing.use_token(9);
INSERT INTO per_scope VALUES (1, 'trunc-a', 9), (2, 'trunc-b', 9), (3, 'trunc-a', 9);
COMMIT;
SELECT scope, mark FROM fencing.scopes WHERE scope LIKE 'trunc-%' ORDER BY scope COLLATE "C";
SELECT fencing.takeover('trunc-b', 12);
BEGIN;
SELECT fencing.use_token(10);
TRUNCATE per_scope;
ROLLBACK;
BEGIN;
SELECT fencing.use_token('trunc-a', 9);
TRUNCATE per_scope;
ROLLBACK;
BEGIN;
SELECT fencing.use_token(12);
TRUNCATE per_scope;
COMMIT;
SELECT count(*) FROM per_scope;
SELECT scope, mark FROM fencing.scopes WHERE scope LIKE 'trunc-%' ORDER BY scope COLLATE "C";

-- partitioned: the parent has no rows of its own, each partition is judged
CREATE TABLE parted_rows (id int, tok bigint) PARTITION BY RANGE (id);
CREATE TABLE parted_rows_1 PARTITION OF parted_rows FOR VALUES FROM (0) TO (10);
SELECT fencing.protect('parted_rows', 'tok');
CREATE TABLE parted_rows_2 PARTITION OF parted_rows FOR VALUES FROM (10) TO (20);
INSERT INTO parted_rows VALUES (1, 3), (11, 8);
BEGIN;
SELECT fencing.use_token(5);
TRUNCATE parted_rows;
ROLLBACK;
BEGIN;
SELECT fencing.use_token(5);
TRUNCATE parted_rows_1;
COMMIT;
BEGIN;
SELECT fencing.use_token(8);
TRUNCATE parted_rows;
COMMIT;
SELECT count(*) FROM parted_rows;
CREATE TABLE parted_scopes (id int, scope text, tok bigint) PARTITION BY LIST (scope);
CREATE TABLE parted_scopes_a PARTITION OF parted_scopes FOR VALUES IN ('trunc-a');
CREATE TABLE parted_scopes_b PARTITION OF parted_scopes FOR VALUES IN ('trunc-b');
SELECT fencing.protect('parted_scopes', 'tok', scope_column => 'scope');
BEGIN;
SELECT fencing.use_token(12);
INSERT INTO parted_scopes VALUES (1, 'trunc-a', 12), (2, 'trunc-b', 12);
COMMIT;
SELECT fencing.takeover('trunc-b', 13);
BEGIN;
SELECT fencing.use_token(12);
TRUNCATE parted_scopes;
ROLLBACK;
BEGIN;
SELECT fencing.use_token(13);
TRUNCATE parted_scopes;
COMMIT;
SELECT count(*) FROM parted_scopes;

-- The TRUNCATE trigger takes no arguments: it judges by the table's row
-- trigger, partitions added later included.  One made with arguments, as
-- 1.3's protect() made it, is judged the same way: by the row trigger (here
-- its arguments name another scope, and count for nothing).
SELECT c.relname, t.tgnargs, t.tgenabled
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
 WHERE t.tgname = 'zz_fence_truncate' AND c.relname LIKE 'parted\_rows%'
 ORDER BY 1;
DROP TRIGGER zz_fence_truncate ON parted_scopes_a;
CREATE TRIGGER zz_fence_truncate BEFORE TRUNCATE ON parted_scopes_a
    FOR EACH STATEMENT EXECUTE FUNCTION fencing.fence_trigger('tok', 'error', 'scope', 'trunc-elsewhere');
ALTER TABLE parted_scopes_a ENABLE ALWAYS TRIGGER zz_fence_truncate;
BEGIN;
SELECT fencing.use_token(14);
INSERT INTO parted_scopes VALUES (3, 'trunc-a', 14);
COMMIT;
SELECT fencing.takeover('trunc-a', 15);
BEGIN;
SELECT fencing.use_token(14);
TRUNCATE parted_scopes_a;
ROLLBACK;
BEGIN;
SELECT fencing.use_token(15);
TRUNCATE parted_scopes_a;
COMMIT;
SELECT count(*) FROM parted_scopes;
SELECT count(*) FROM fencing.scopes WHERE scope = 'trunc-elsewhere';
SELECT relation, enabled, problem FROM fencing.protected_tables WHERE relation = 'parted_scopes'::regclass;

-- A second fence row trigger (here the first one renamed, then protect()
-- again with another scope) only adds its checks: TRUNCATE, and the raises
-- INSERT ... ON CONFLICT defers to the AFTER INSERT trigger, are judged under
-- both, as each row is (not under the first trigger by name).
SELECT fencing.create_scope('trunc-c', 'external'), fencing.create_scope('trunc-d', 'external');
CREATE TABLE twice (k int PRIMARY KEY, tok bigint);
SELECT fencing.protect('twice', 'tok', scope => 'trunc-c');
ALTER TRIGGER zz_fence_row ON twice RENAME TO aa_fence_row;
SELECT fencing.protect('twice', 'tok', scope => 'trunc-d');
SELECT tgname, fencing.trigger_arguments(tgargs) AS args FROM pg_trigger
 WHERE tgrelid = 'twice'::regclass ORDER BY 1;
BEGIN;
SELECT fencing.use_token(200);
INSERT INTO twice VALUES (1, 200);
COMMIT;
SELECT fencing.takeover('trunc-c', 250), fencing.takeover('trunc-d', 300);
-- stale for trunc-d only
BEGIN;
SELECT fencing.use_token(260);
DELETE FROM twice;
ROLLBACK;
BEGIN;
SELECT fencing.use_token(260);
TRUNCATE twice;
ROLLBACK;
-- a raise deferred by ON CONFLICT is made for both scopes
BEGIN;
SELECT fencing.use_token(400);
INSERT INTO twice VALUES (2, 400) ON CONFLICT DO NOTHING;
COMMIT;
SELECT scope, mark FROM fencing.scopes WHERE scope IN ('trunc-c', 'trunc-d') ORDER BY scope COLLATE "C";
BEGIN;
SELECT fencing.use_token(300);
TRUNCATE twice;
ROLLBACK;
BEGIN;
SELECT fencing.use_token(400);
TRUNCATE twice;
COMMIT;
SELECT count(*) FROM twice;
DROP TABLE twice;

-- rows committed while TRUNCATE waited for its lock are judged too
-- (test/isolation/specs has the concurrent case; here: a row of this transaction)
BEGIN;
SELECT fencing.use_token(20);
INSERT INTO per_row VALUES (4, 20);
SELECT fencing.use_token(19);
TRUNCATE per_row;
ROLLBACK;

DROP TABLE per_row, per_scope, parted_rows, parted_scopes;
DROP SCHEMA truncator CASCADE;
-- protect() gave the owner of the tables it fenced EXECUTE on the fence
DROP OWNED BY regress_truncator;
DROP ROLE regress_truncator;
