-- 25_cluster_marks: the marks of a Citus cluster, on one node.  Once
-- fencing.cluster_marks exists (fencing.distribute_marks() makes it on a
-- Citus coordinator; test/stages/citus proves the cluster), every change of
-- a scope's row is fed into it, and no write to a table creates a scope or
-- raises a mark.  Here the table is made by hand, as distribute_marks()
-- makes it, without Citus: its trigger fires on this node's only copy.
\set SHOW_CONTEXT never
SELECT current_user AS su, current_database() AS regress_db \gset
CREATE DATABASE regress_fencing_cluster;
\c regress_fencing_cluster
SET client_min_messages = error;
CREATE EXTENSION fencing;
RESET client_min_messages;

-- not a Citus database: refused, and nothing made
SELECT fencing.distribute_marks();
SELECT pg_catalog.to_regclass('fencing.cluster_marks') IS NULL AS no_table;

-- a single node: writes create scopes and raise marks, as always
CREATE TABLE jobs (id int PRIMARY KEY, v int, tok bigint);
SELECT fencing.protect('jobs', 'tok', scope => 'solo');
INSERT INTO jobs VALUES (1, 0, 5);
SELECT scope, mark FROM fencing.scopes ORDER BY scope COLLATE "C";

-- the cluster's table, as distribute_marks() makes it
CREATE TABLE fencing.cluster_marks (
    scope  text PRIMARY KEY,
    mark   bigint NOT NULL,
    owner  name NOT NULL,
    tokens text NOT NULL,
    exact  boolean NOT NULL,
    grants text[] NOT NULL
);
REVOKE ALL ON fencing.cluster_marks FROM PUBLIC;
CREATE TRIGGER apply_cluster_mark BEFORE INSERT OR UPDATE ON fencing.cluster_marks
    FOR EACH ROW EXECUTE FUNCTION fencing.apply_cluster_mark();

-- a write no longer raises a mark (ZF003) nor creates a scope (ZF003),
-- and leaves nothing behind
\set VERBOSITY default
INSERT INTO jobs VALUES (2, 0, 6);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE tenant_jobs (id int PRIMARY KEY, tenant text, tok bigint);
SELECT fencing.protect('tenant_jobs', 'tok', scope_column => 'tenant');
INSERT INTO tenant_jobs VALUES (1, 'new-tenant', 1);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
SELECT scope, mark FROM fencing.scopes ORDER BY scope COLLATE "C";
SELECT count(*) AS rows FROM jobs;
-- at the mark, and below it, as before
INSERT INTO jobs VALUES (2, 0, 5);
INSERT INTO jobs VALUES (3, 0, 4);

-- the clock's calls change marks, and each change is fed: a term, a
-- takeover of an external scope, a reset (fed exact), a new scope
SELECT fencing.fence_next_epoch('solo') AS term;
SELECT fencing.create_scope('ext', tokens => 'external');
SELECT fencing.takeover('ext', 40);
SELECT scope, mark, owner = :'su' AS owner_is_su, tokens, exact
  FROM fencing.cluster_marks ORDER BY scope COLLATE "C";
INSERT INTO jobs VALUES (4, 0, 5);
INSERT INTO jobs VALUES (4, 0, 6);
-- also in a transaction that holds the scope exclusively (its takeover)
BEGIN;
SELECT fencing.takeover('solo', 6);
INSERT INTO jobs VALUES (5, 0, 9);
ROLLBACK;
SELECT fencing.reset_mark('ext', 10);
SELECT scope, mark, exact FROM fencing.cluster_marks WHERE scope = 'ext';

-- a fed row (what the coordinator sends) makes this node's scope: created
-- with the owner and kind fed, its mark only rising unless exact
CREATE ROLE regress_fencing_cluster_grantee;
INSERT INTO fencing.cluster_marks
    VALUES ('fed', 9, :'su', 'external', false,
            '{write:regress_fencing_cluster_grantee,read:public,lead:no_such_role}');
UPDATE fencing.cluster_marks SET mark = 3 WHERE scope = 'fed';
SELECT scope, mark, tokens FROM fencing.scopes WHERE scope = 'fed';
UPDATE fencing.cluster_marks SET mark = 3, exact = true WHERE scope = 'fed';
SELECT scope, mark, tokens FROM fencing.scopes WHERE scope = 'fed';
-- its grants are the fed ones (a role this node lacks left out), and follow
SELECT privilege COLLATE "C", CASE grantee WHEN 0 THEN 'public' ELSE grantee::regrole::text END COLLATE "C" AS grantee
  FROM fencing.scope_grants WHERE scope = 'fed' ORDER BY 1, 2;
UPDATE fencing.cluster_marks SET grants = '{lead:regress_fencing_cluster_grantee}' WHERE scope = 'fed';
SELECT privilege COLLATE "C", grantee::regrole AS grantee FROM fencing.scope_grants WHERE scope = 'fed' ORDER BY 1, 2;
-- the coordinator's grants and revokes are fed
SELECT fencing.grant_scope('solo', 'write', 'regress_fencing_cluster_grantee');
SELECT scope, grants FROM fencing.cluster_marks WHERE scope = 'solo';
SELECT fencing.revoke_scope('solo', 'write', 'regress_fencing_cluster_grantee');
SELECT scope, grants FROM fencing.cluster_marks WHERE scope = 'solo';

-- the trigger function acts on fencing.cluster_marks only
CREATE TABLE public.fake_marks (LIKE fencing.cluster_marks);
CREATE TRIGGER apply BEFORE INSERT ON public.fake_marks
    FOR EACH ROW EXECUTE FUNCTION fencing.apply_cluster_mark();
INSERT INTO public.fake_marks VALUES ('solo', 1000, :'su', 'issued', true, '{}');
CREATE TABLE fencing.fake_marks_1 (LIKE fencing.cluster_marks);
CREATE TRIGGER apply BEFORE INSERT ON fencing.fake_marks_1
    FOR EACH ROW EXECUTE FUNCTION fencing.apply_cluster_mark();
INSERT INTO fencing.fake_marks_1 VALUES ('solo', 1000, :'su', 'issued', true, '{}');
SELECT scope, mark FROM fencing.scopes WHERE scope = 'solo';
-- a table named like a placement of it, with other columns (made or altered
-- by hand), is refused, not read by position with the wrong types
\set VERBOSITY default
CREATE TABLE fencing.cluster_marks_901 (scope text, mark numeric, owner name, tokens text, exact boolean, grants text[]);
CREATE TRIGGER apply BEFORE INSERT ON fencing.cluster_marks_901
    FOR EACH ROW EXECUTE FUNCTION fencing.apply_cluster_mark();
INSERT INTO fencing.cluster_marks_901 VALUES ('solo', 1000, :'su', 'issued', true, '{}');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE fencing.cluster_marks_902 (scope text, mark bigint, owner name, tokens text, exact boolean);
CREATE TRIGGER apply BEFORE INSERT ON fencing.cluster_marks_902
    FOR EACH ROW EXECUTE FUNCTION fencing.apply_cluster_mark();
INSERT INTO fencing.cluster_marks_902 VALUES ('solo', 1000, :'su', 'issued', true);
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE fencing.cluster_marks_902 DROP COLUMN exact;
ALTER TABLE fencing.cluster_marks_902 ADD COLUMN exact boolean, ADD COLUMN grants text[];
INSERT INTO fencing.cluster_marks_902 (scope, mark, owner, tokens, exact, grants)
    VALUES ('solo', 1000, :'su', 'issued', true, '{}');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
DROP TABLE fencing.cluster_marks_901, fencing.cluster_marks_902;
SELECT scope, mark FROM fencing.scopes WHERE scope = 'solo';
-- and PUBLIC may not use it, nor write the cluster's table
CREATE ROLE regress_fencing_cluster_stranger;
GRANT CREATE ON SCHEMA public TO regress_fencing_cluster_stranger;
SET ROLE regress_fencing_cluster_stranger;
CREATE TABLE public.stranger_marks (scope text, mark bigint, owner name, tokens text, exact boolean, grants text[]);
CREATE TRIGGER apply BEFORE INSERT ON public.stranger_marks
    FOR EACH ROW EXECUTE FUNCTION fencing.apply_cluster_mark();
INSERT INTO fencing.cluster_marks VALUES ('solo', 1000, 'x', 'issued', true, '{}');
SELECT fencing.distribute_marks();
-- nor the feed lease's functions
SELECT fencing.set_cluster_lease('4 s');
SELECT * FROM fencing.renew_cluster_lease();
SELECT fencing.take_cluster_lease('4 s', NULL);
RESET ROLE;

-- the feed lease: a Citus cluster's, refused here, and nothing made
SELECT fencing.set_cluster_lease('4 s');
SELECT * FROM fencing.renew_cluster_lease();
SELECT fencing.take_cluster_lease('4 s', NULL);
SELECT fencing.take_cluster_lease('1 day', NULL);
SELECT fencing.take_cluster_lease('-1 s', NULL);
SELECT fencing.take_cluster_lease(NULL, NULL);
SELECT count(*) AS lease_rows FROM fencing.cluster_lease;
SELECT lease, lease_from FROM fencing.node_state;

-- without the cluster's table, a write raises again
DROP TABLE fencing.cluster_marks;
INSERT INTO jobs VALUES (5, 0, 7);
SELECT scope, mark FROM fencing.scopes WHERE scope = 'solo';

\c :regress_db
DROP DATABASE regress_fencing_cluster;
DROP ROLE regress_fencing_cluster_stranger;
DROP ROLE regress_fencing_cluster_grantee;
