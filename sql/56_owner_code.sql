-- 56_owner_code: the fence's DDL about a user's table runs with the table
-- owner's rights, never with the extension owner's or the caller's.  DDL can
-- evaluate a table's own code: CREATE TRIGGER on a partitioned table recurses
-- into the partitions and builds the partition key, folding its expression,
-- which calls the owner's functions.  Here every function of the tenant's
-- records who ran it and tries to make the tenant a superuser.
\set SHOW_CONTEXT never
SELECT current_user AS superuser_name \gset
CREATE ROLE regress_eve LOGIN;
GRANT CREATE ON DATABASE :"DBNAME" TO regress_eve;
SET ROLE regress_eve;
CREATE SCHEMA es;
CREATE TABLE es.calls (who name, attempt text);
-- volatile: it may write and run utility statements, called from an
-- immutable function (a partition key's or an index's expression)
CREATE FUNCTION es.escalate() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO es.calls VALUES (current_user, 'called');
    BEGIN
        ALTER ROLE regress_eve SUPERUSER;
        INSERT INTO es.calls VALUES (current_user, 'ALTER ROLE worked');
    EXCEPTION WHEN OTHERS THEN
        NULL;
    END;
END $$;
CREATE FUNCTION es.k(text) RETURNS int IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
    PERFORM es.escalate();
    RETURN 0;
END $$;
-- a partitioned table whose key calls her function
CREATE TABLE es.pt (id int, tok bigint) PARTITION BY RANGE ((id + es.k('x')));
CREATE TABLE es.pt_1 PARTITION OF es.pt FOR VALUES FROM (0) TO (100);
-- a sub-partitioned one: the key of the middle level calls it too
CREATE TABLE es.sp (id int, tok bigint) PARTITION BY RANGE (id);
CREATE TABLE es.sp_1 PARTITION OF es.sp FOR VALUES FROM (0) TO (100)
  PARTITION BY RANGE ((id + es.k('y')));
CREATE TABLE es.sp_1_1 PARTITION OF es.sp_1 FOR VALUES FROM (0) TO (50);
-- a plain table with an expression index and a partial index on it
CREATE TABLE es.ix (id int, tok bigint);
CREATE INDEX ix_expr ON es.ix ((id + es.k('z')));
CREATE INDEX ix_partial ON es.ix (id) WHERE es.k('w') = 0;
-- a partitioned table with such indexes
CREATE TABLE es.pix (id int, tok bigint) PARTITION BY RANGE (id);
CREATE TABLE es.pix_1 PARTITION OF es.pix FOR VALUES FROM (0) TO (100);
CREATE INDEX pix_expr ON es.pix ((id + es.k('v')));
RESET ROLE;
TRUNCATE es.calls;

-- the tenant protects her tables, each in a fresh session (nothing of them cached)
\c - regress_eve
SELECT fencing.protect('es.pt', 'tok');
\c - regress_eve
SELECT fencing.protect('es.sp', 'tok');
\c - regress_eve
SELECT fencing.protect('es.ix', 'tok');
\c - regress_eve
SELECT fencing.protect('es.pix', 'tok');
\c - regress_eve
-- a partition created and one attached later (the event trigger's path)
CREATE TABLE es.pt_2 PARTITION OF es.pt FOR VALUES FROM (100) TO (200);
CREATE TABLE es.pt_3 (id int, tok bigint);
ALTER TABLE es.pt ATTACH PARTITION es.pt_3 FOR VALUES FROM (200) TO (300);
\c - regress_eve
SELECT fencing.unprotect('es.sp');
\c - :superuser_name
-- a superuser protecting and unprotecting the tenant's tables runs her code
-- as her, not as itself
SELECT fencing.protect('es.sp', 'tok');
\c - :superuser_name
SELECT fencing.unprotect('es.pt');
\c - :superuser_name
SELECT fencing.protect('es.pt', 'tok');

-- whatever of hers ran, ran as her, and she is no superuser
SELECT DISTINCT who, attempt FROM es.calls ORDER BY 1, 2;
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_eve';
-- and every table is fenced, the partitions made later too
SELECT c.relname, string_agg(t.tgname, ', ' ORDER BY t.tgname COLLATE "C") AS fence_triggers
  FROM pg_class c JOIN pg_trigger t ON t.tgrelid = c.oid
 WHERE c.relnamespace = 'es'::regnamespace AND t.tgname LIKE 'zz_fence%'
 GROUP BY c.relname ORDER BY c.relname COLLATE "C";

-- the one switch to the extension's owner protect() keeps is its GRANT of
-- EXECUTE on the fence to the table's owner
SELECT has_function_privilege('regress_eve', 'fencing.fence_trigger()', 'EXECUTE') AS eve_may_execute_fence;

-- a setting her code makes for the session (set_config(..., false)) does not
-- outlive the switch: the superuser calling protect() keeps its search_path
RESET ROLE;
CREATE OR REPLACE FUNCTION es.k(text) RETURNS int IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'es, pg_catalog', false);
    PERFORM es.escalate();
    RETURN 0;
END $$;
ALTER FUNCTION es.k(text) OWNER TO regress_eve;
\c - :superuser_name
SET search_path = public;
SELECT fencing.unprotect('es.pt');
SELECT fencing.protect('es.pt', 'tok');
SHOW search_path;
SELECT DISTINCT who, attempt FROM es.calls ORDER BY 1, 2;

-- a fenced table handed to another owner: the new owner may execute the
-- fence, so that it can add partitions
CREATE ROLE regress_vic;
CREATE SCHEMA vic AUTHORIZATION regress_vic;
GRANT USAGE ON SCHEMA es TO regress_vic;
SET ROLE regress_eve;
CREATE TABLE es.pp2 (id int, tok bigint) PARTITION BY RANGE (id);
SELECT fencing.protect('es.pp2', 'tok');
RESET ROLE;
SELECT has_function_privilege('regress_vic', 'fencing.fence_trigger()', 'EXECUTE') AS vic_may_execute_fence;
ALTER TABLE es.pp2 OWNER TO regress_vic;
SELECT has_function_privilege('regress_vic', 'fencing.fence_trigger()', 'EXECUTE') AS new_owner_may_execute_fence;
SET ROLE regress_vic;
CREATE TABLE vic.pp2_1 PARTITION OF es.pp2 FOR VALUES FROM (0) TO (100);
SELECT tgname FROM pg_trigger WHERE tgrelid = 'vic.pp2_1'::regclass AND tgname LIKE 'zz_fence%' ORDER BY 1;
RESET ROLE;

-- another role's partition below her table (a plain key this time: a
-- superuser's ATTACH would run her key's function as itself, in Postgres):
-- her unprotect() may not drop its fence (she has no TRIGGER right there),
-- and her ALTER TABLE of the parent locks nothing of it
SET ROLE regress_eve;
CREATE TABLE es.pp (id int, tok bigint) PARTITION BY RANGE (id);
SELECT fencing.protect('es.pp', 'tok');
SET ROLE regress_vic;
CREATE TABLE vic.q (id int, tok bigint);
RESET ROLE;
ALTER TABLE es.pp ATTACH PARTITION vic.q FOR VALUES FROM (0) TO (100);
SELECT 'vic.q'::regclass::oid AS q_oid \gset
SELECT tgname FROM pg_trigger WHERE tgrelid = :q_oid AND tgname LIKE 'zz_fence%' ORDER BY 1;
\c - regress_eve
SELECT fencing.unprotect('es.pp');
\echo :LAST_ERROR_SQLSTATE
BEGIN;
ALTER TABLE es.pp RENAME TO pp_renamed;
SELECT count(*) AS locks_on_others_partition FROM pg_locks
 WHERE relation = :q_oid AND pid = pg_backend_pid();
ROLLBACK;
\c - :superuser_name
SELECT tgname FROM pg_trigger WHERE tgrelid = :q_oid AND tgname LIKE 'zz_fence%' ORDER BY 1;
SELECT rolsuper FROM pg_roles WHERE rolname IN ('regress_eve', 'regress_vic');

-- unprotect() of a parent drops a partition's TRUNCATE fence only with the
-- row fence the parent gave it: a partition protected on its own keeps its
-- whole fence.  The fence's DDL on a partition runs as the partition's
-- owner, so the tenant, holding only TRIGGER on the victim's partition (what
-- protect() of its parent asks), could otherwise drop the victim's trigger,
-- which DROP TRIGGER refuses it, and leave the victim's table protected but
-- open to TRUNCATE.
SELECT fencing.create_scope('regress_vic_scope', 'external', 'regress_vic');
SET ROLE regress_vic;
CREATE TABLE vic.own (id int, tok bigint);
SELECT fencing.protect('vic.own', 'tok', 'regress_vic_scope');
GRANT USAGE ON SCHEMA vic TO regress_eve;
GRANT TRIGGER ON vic.own TO regress_eve;
SET ROLE regress_eve;
CREATE TABLE es.tenant_root (id int, tok bigint) PARTITION BY RANGE (id);
RESET ROLE;
ALTER TABLE es.tenant_root ATTACH PARTITION vic.own FOR VALUES FROM (0) TO (100);
SET ROLE regress_eve;
DROP TRIGGER zz_fence_truncate ON vic.own;
SELECT fencing.unprotect('es.tenant_root');
RESET ROLE;
SELECT tgname FROM pg_trigger
 WHERE tgrelid = 'vic.own'::regclass AND tgname LIKE 'zz_fence%' ORDER BY 1;
SET ROLE regress_vic;
TRUNCATE vic.own;
RESET ROLE;
-- the parent's own protection: unprotect() removes all of it, partitions too
SET ROLE regress_eve;
CREATE TABLE es.pt2 (id int, tok bigint) PARTITION BY RANGE (id);
CREATE TABLE es.pt2_1 PARTITION OF es.pt2 FOR VALUES FROM (0) TO (100);
SELECT fencing.protect('es.pt2', 'tok');
SELECT fencing.unprotect('es.pt2');
SELECT count(*) AS fence_triggers_left FROM pg_trigger
 WHERE tgrelid IN ('es.pt2'::regclass, 'es.pt2_1'::regclass) AND tgname LIKE 'zz_fence%';
RESET ROLE;

-- no function of the extension takes a DDL command (a pointer into the
-- server's memory) from SQL
SELECT count(*) AS takes_ddl_command FROM pg_proc
 WHERE pronamespace = 'fencing'::regnamespace
   AND 'pg_catalog.pg_ddl_command'::regtype = ANY (proargtypes::oid[]);

DROP SCHEMA es CASCADE;
DROP SCHEMA vic CASCADE;
DROP OWNED BY regress_eve, regress_vic;
DROP ROLE regress_eve, regress_vic;
