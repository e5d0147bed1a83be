-- 51_surface: the whole surface of the extension and who may use each
-- part of it.  Any change of a function, table, view or sequence of schema
-- fencing, or of who may use it, changes this output: review it then.
-- Internal functions are executable by nobody but the owner (the fence
-- trigger above all: a CREATE TRIGGER made by hand could give it any
-- arguments), but for two that their callers run with their own rights:
-- raise_pending() (a trigger's WHEN condition) and trigger_arguments()
-- (the protected_tables view).  The fence checks its configuration
-- whoever made it.
\set SHOW_CONTEXT never
\set su :USER

-- every function: its signature and who may execute it ("owner": the
-- extension's owner, which may do everything)
SELECT p.oid::regprocedure AS function,
       coalesce((SELECT string_agg(CASE WHEN a.grantee = 0 THEN 'PUBLIC'
                                        WHEN a.grantee = p.proowner THEN 'owner'
                                        ELSE a.grantee::regrole::text END, ', '
                                   ORDER BY CASE WHEN a.grantee = 0 THEN 'PUBLIC'
                                                 WHEN a.grantee = p.proowner THEN 'owner'
                                                 ELSE a.grantee::regrole::text END COLLATE "C")
                   FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
                  WHERE a.privilege_type = 'EXECUTE'), '-') AS may_execute,
       p.prosecdef AS security_definer
  FROM pg_proc p
 WHERE p.pronamespace = 'fencing'::regnamespace
 ORDER BY p.oid::regprocedure::text COLLATE "C";

-- every table, view and sequence: each privilege and who holds it
SELECT c.oid::regclass AS relation,
       CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view'
                      WHEN 'S' THEN 'sequence' ELSE c.relkind::text END AS kind,
       g.grantee, string_agg(g.privilege_type, ', ' ORDER BY g.privilege_type COLLATE "C") AS privileges
  FROM pg_class c
 CROSS JOIN LATERAL (
       SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC'
                   WHEN a.grantee = c.relowner THEN 'owner'
                   ELSE a.grantee::regrole::text END AS grantee,
              a.privilege_type
         FROM aclexplode(coalesce(c.relacl,
                                  acldefault(CASE c.relkind WHEN 'S' THEN 's'
                                                                    ELSE 'r' END::"char",
                                             c.relowner))) a) g
 WHERE c.relnamespace = 'fencing'::regnamespace
   AND c.relkind IN ('r', 'v', 'S', 'm', 'p', 'f')
 GROUP BY c.oid, c.relkind, g.grantee
 ORDER BY c.oid::regclass::text COLLATE "C", g.grantee COLLATE "C";

-- no column privileges of their own, the schema is usable by everyone
SELECT a.attrelid::regclass, a.attname, a.attacl
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE c.relnamespace = 'fencing'::regnamespace AND a.attacl IS NOT NULL;
SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' WHEN a.grantee = n.nspowner THEN 'owner'
            ELSE a.grantee::regrole::text END COLLATE "C" AS grantee, a.privilege_type COLLATE "C"
  FROM pg_namespace n, aclexplode(n.nspacl) a
 WHERE n.nspname = 'fencing'
 ORDER BY 1, 2;

-- An ordinary role cannot call the fence from a trigger of its own: it
-- would bind its table to another tenant's scope, read the scope's mark
-- from ZF001 and hold the scope's lock in an open transaction.
CREATE ROLE regress_surface_victim;
CREATE ROLE regress_surface_stranger;
CREATE SCHEMA surface AUTHORIZATION regress_surface_stranger;
SELECT fencing.create_scope('surface-victim', 'external', 'regress_surface_victim');
SELECT fencing.takeover('surface-victim', 40);
SET ROLE regress_surface_stranger;
CREATE TABLE surface.stranger_rows (id int, tok bigint);
CREATE TRIGGER zz_fence_row BEFORE INSERT OR UPDATE OR DELETE ON surface.stranger_rows
    FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('tok', 'error', 'scope', 'surface-victim');
\echo :LAST_ERROR_SQLSTATE
-- nor through protect(), which checks the owner's right to the scope
SELECT fencing.protect('surface.stranger_rows', 'tok', scope => 'surface-victim');
\echo :LAST_ERROR_SQLSTATE
-- protect() works for the table's owner, per row
SELECT fencing.protect('surface.stranger_rows', 'tok');
SELECT relation, token_column, scope, enabled FROM fencing.protected_tables
 WHERE relation = 'surface.stranger_rows'::regclass;
RESET ROLE;

-- protect() puts the fence on every partition as the extension's owner:
-- only where the caller may put triggers itself
CREATE TABLE surface.stranger_tree (id int, tok bigint) PARTITION BY RANGE (id);
ALTER TABLE surface.stranger_tree OWNER TO regress_surface_stranger;
CREATE TABLE surface.victim_leaf PARTITION OF surface.stranger_tree FOR VALUES FROM (0) TO (10);
ALTER TABLE surface.victim_leaf OWNER TO regress_surface_victim;
SET ROLE regress_surface_stranger;
SELECT fencing.protect('surface.stranger_tree', 'tok');
RESET ROLE;
SELECT count(*) AS fence_triggers FROM pg_trigger
 WHERE tgfoid = 'fencing.fence_trigger()'::regprocedure
   AND tgrelid IN ('surface.stranger_tree'::regclass, 'surface.victim_leaf'::regclass);

-- a trigger a superuser made by hand, naming a scope the table's owner may
-- not write to, fails at the write, whoever writes
SELECT fencing.unprotect('surface.stranger_rows');
CREATE TRIGGER zz_fence_row BEFORE INSERT OR UPDATE OR DELETE ON surface.stranger_rows
    FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('tok', 'error', 'scope', 'surface-victim');
CREATE TRIGGER zz_fence_truncate BEFORE TRUNCATE ON surface.stranger_rows
    FOR EACH STATEMENT EXECUTE FUNCTION fencing.fence_trigger('tok', 'error', 'scope', 'surface-victim');
SET ROLE regress_surface_stranger;
BEGIN;
SELECT fencing.use_token(40);
INSERT INTO surface.stranger_rows VALUES (1, 40);
ROLLBACK;
BEGIN;
SELECT fencing.use_token(40);
TRUNCATE surface.stranger_rows;
ROLLBACK;
RESET ROLE;
BEGIN;
SELECT fencing.use_token(40);
INSERT INTO surface.stranger_rows VALUES (1, 40);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- the scope's owner grants the write privilege: the binding holds ...
SET ROLE regress_surface_victim;
SELECT fencing.grant_scope('surface-victim', 'write', 'regress_surface_stranger');
RESET ROLE;
SET ROLE regress_surface_stranger;
BEGIN;
SELECT fencing.use_token(40);
INSERT INTO surface.stranger_rows VALUES (1, 40);
COMMIT;
RESET ROLE;
-- ... until it is revoked (the same session notices)
SET ROLE regress_surface_victim;
SELECT fencing.revoke_scope('surface-victim', 'write', 'regress_surface_stranger');
RESET ROLE;
SET ROLE regress_surface_stranger;
BEGIN;
SELECT fencing.use_token(40);
UPDATE surface.stranger_rows SET id = 2;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
RESET ROLE;

-- names built from bytes are refused unless valid in the database encoding:
-- the arguments of a trigger (a superuser can write any bytes there) ...
SET ROLE regress_surface_stranger;
SELECT fencing.trigger_arguments('\x746f6b00ff00'::bytea);
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.trigger_arguments('\x746f6b00c3a900'::bytea);
RESET ROLE;
-- ... and a scope read from a trigger's arguments, before any lock
BEGIN;
UPDATE pg_trigger SET tgargs = '\x746f6b006572726f720073636f706500737572666163652dff00'::bytea
 WHERE tgrelid = 'surface.stranger_rows'::regclass AND tgname = 'zz_fence_row';
COMMIT;
\c - :su
BEGIN;
SELECT fencing.use_token(40);
UPDATE surface.stranger_rows SET id = 3;
ROLLBACK;

DROP SCHEMA surface CASCADE;
DELETE FROM fencing.scopes WHERE scope = 'surface-victim';
-- protect() gave the owners of the tables it fenced EXECUTE on the fence
DROP OWNED BY regress_surface_victim, regress_surface_stranger;
DROP ROLE regress_surface_victim, regress_surface_stranger;
