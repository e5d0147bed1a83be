-- 45_replica_and_triggers: the fence cannot be switched off from outside.
-- (1) Its triggers fire ALWAYS: under session_replication_role = replica,
-- which a role granted SET on it may set (PostgreSQL 15+), the fence lets
-- only a superuser session or a logical replication apply worker write
-- unchecked; anyone else is refused (42501), whatever the table, token
-- source, scope kind or statement.  fencing.health lists the roles that may
-- set it.  (2) Every trigger the fence needs counts: a disabled or dropped
-- zz_fence_inserted (on the table or on one partition) makes
-- protected_tables and health say the fence does not work, and an
-- INSERT ... ON CONFLICT whose raise only that trigger could make is
-- refused (55000) instead of losing the raise or raising the mark for a row
-- never written.  (3) The upgrade makes the triggers of tables protected
-- before ALWAYS.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
SET client_min_messages = warning;
CREATE DATABASE fencing_replica;
\c fencing_replica
SET client_min_messages = warning;
CREATE EXTENSION fencing;
RESET client_min_messages;

CREATE ROLE regress_fencing_replica_app;
CREATE ROLE regress_fencing_replica_member IN ROLE regress_fencing_replica_app;
CREATE ROLE regress_fencing_replica_plain;
GRANT SET ON PARAMETER session_replication_role TO regress_fencing_replica_app;

-- one table of each kind: per-row column token, declared token with a fixed
-- scope, fixed scope, scope column, partitioned by its scope column
CREATE TABLE rp_row (id int PRIMARY KEY, v text, tok bigint);
SELECT fencing.protect('rp_row', 'tok');
CREATE TABLE rp_declared (id int PRIMARY KEY, v text, tok bigint);
SELECT fencing.protect('rp_declared', 'tok', scope => 'rp-declared', tokens => 'declared');
CREATE TABLE rp_fixed (id int PRIMARY KEY, v text, tok bigint);
SELECT fencing.protect('rp_fixed', 'tok', scope => 'rp-fixed');
CREATE TABLE rp_col (id int PRIMARY KEY, shard text NOT NULL, v text, tok bigint);
SELECT fencing.protect('rp_col', 'tok', scope_column => 'shard');
CREATE TABLE rp_part (id int, shard text NOT NULL, v text, tok bigint, PRIMARY KEY (shard, id))
    PARTITION BY LIST (shard);
CREATE TABLE rp_part_a PARTITION OF rp_part FOR VALUES IN ('rp-a');
CREATE TABLE rp_part_b PARTITION OF rp_part FOR VALUES IN ('rp-b');
SELECT fencing.protect('rp_part', 'tok', scope_column => 'shard');
-- a partition created after protect() gets ALWAYS triggers too
CREATE TABLE rp_part_c PARTITION OF rp_part FOR VALUES IN ('rp-c');
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE
   ON rp_row, rp_declared, rp_fixed, rp_col, rp_part
   TO regress_fencing_replica_app, regress_fencing_replica_plain;

-- every fence trigger fires ALWAYS ('A'), partitions' too
SELECT tgrelid::regclass AS rel, tgname, tgenabled
  FROM pg_trigger WHERE tgfoid = 'fencing.fence_trigger()'::regprocedure
 ORDER BY tgrelid::regclass::text COLLATE "C", tgname;
SELECT relation, enabled, problem FROM fencing.protected_tables ORDER BY relation::text COLLATE "C";

-- the leader's rows, at token 5 (external tokens: the first write sets each mark)
BEGIN;
SELECT fencing.use_token(5);
INSERT INTO rp_row VALUES (1, 'leader', 5);
INSERT INTO rp_declared VALUES (1, 'leader', NULL);
INSERT INTO rp_fixed VALUES (1, 'leader', 5);
INSERT INTO rp_col VALUES (1, 'rp-c1', 'leader', 5), (2, 'rp-c2', 'leader', 5);
INSERT INTO rp_part VALUES (1, 'rp-a', 'leader', 5), (1, 'rp-b', 'leader', 5), (1, 'rp-c', 'leader', 5);
COMMIT;
CREATE VIEW rp_state AS
SELECT 'rp_row' AS t, id, v, tok FROM rp_row
UNION ALL SELECT 'rp_declared', id, v, tok FROM rp_declared
UNION ALL SELECT 'rp_fixed', id, v, tok FROM rp_fixed
UNION ALL SELECT 'rp_col ' || shard, id, v, tok FROM rp_col
UNION ALL SELECT 'rp_part ' || shard, id, v, tok FROM rp_part;
GRANT SELECT ON rp_state TO PUBLIC;
SELECT * FROM rp_state ORDER BY t COLLATE "C", id;
SELECT scope, mark FROM fencing.scopes ORDER BY scope COLLATE "C";

-- 1. A role granted SET on session_replication_role: under replica, each
-- write to a protected table is refused, tokenless or stale, whatever the
-- table and statement (1.3 committed them all: the triggers did not fire).
SET ROLE regress_fencing_replica_app;
SET session_replication_role = replica;
SHOW session_replication_role;
-- per-row column token: a tokenless UPDATE (the full error once)
UPDATE rp_row SET v = 'tokenless' WHERE id = 1;
\set VERBOSITY sqlstate
UPDATE rp_row SET v = 'stale', tok = 3 WHERE id = 1;
INSERT INTO rp_row VALUES (2, 'tokenless', NULL);
DELETE FROM rp_row WHERE id = 1;
-- declared token: a stale declaration
BEGIN;
SELECT fencing.use_token('rp-declared', 3);
UPDATE rp_declared SET v = 'stale' WHERE id = 1;
ROLLBACK;
BEGIN;
SELECT fencing.use_token('rp-declared', 3);
DELETE FROM rp_declared WHERE id = 1;
ROLLBACK;
-- fixed scope: stale INSERT, UPDATE, upsert, COPY, MERGE
INSERT INTO rp_fixed VALUES (2, 'stale', 3);
UPDATE rp_fixed SET v = 'stale', tok = 3;
INSERT INTO rp_fixed VALUES (1, 'stale', 3) ON CONFLICT (id) DO UPDATE SET v = excluded.v, tok = excluded.tok;
COPY rp_fixed FROM stdin;
3	copied	3
\.
MERGE INTO rp_fixed f USING (VALUES (1, 'merged')) s(id, v) ON f.id = s.id
  WHEN MATCHED THEN UPDATE SET v = s.v;
-- scope column
UPDATE rp_col SET v = 'stale', tok = 3 WHERE id = 1;
INSERT INTO rp_col VALUES (3, 'rp-c3', 'new scope, no token', NULL);
DELETE FROM rp_col;
-- partitioned: through the parent, a partition directly, a row moving between partitions
INSERT INTO rp_part VALUES (2, 'rp-a', 'stale', 3);
UPDATE rp_part_b SET v = 'stale', tok = 3;
UPDATE rp_part SET shard = 'rp-b', tok = 3 WHERE shard = 'rp-a';
-- TRUNCATE: a table, a partitioned table, one partition
TRUNCATE rp_fixed;
TRUNCATE rp_part;
TRUNCATE rp_part_c;
\set VERBOSITY default
-- with the leader's own token it is refused all the same: nothing is judged under replica
BEGIN;
SELECT fencing.use_token(5);
UPDATE rp_fixed SET v = 'current token' WHERE id = 1;
ROLLBACK;
RESET session_replication_role;
RESET ROLE;
SELECT * FROM rp_state ORDER BY t COLLATE "C", id;
SELECT scope, mark FROM fencing.scopes ORDER BY scope COLLATE "C";

-- 2. Through a superuser's SECURITY DEFINER function: the current role is a
-- superuser, the session's is not; refused too.
CREATE FUNCTION rp_definer_write() RETURNS void LANGUAGE sql SECURITY DEFINER
    SET search_path = public
    AS $$ UPDATE rp_fixed SET v = 'through a definer', tok = 3 $$;
GRANT EXECUTE ON FUNCTION rp_definer_write() TO regress_fencing_replica_app;
SET SESSION AUTHORIZATION regress_fencing_replica_app;
SET session_replication_role = replica;
\set VERBOSITY sqlstate
SELECT rp_definer_write();
\set VERBOSITY default
RESET session_replication_role;
RESET SESSION AUTHORIZATION;
-- a member of the granted role may set it too, and is refused the same way
SET ROLE regress_fencing_replica_member;
SET session_replication_role = replica;
\set VERBOSITY sqlstate
UPDATE rp_col SET v = 'member', tok = 3;
\set VERBOSITY default
RESET session_replication_role;
-- a role without the grant may not set it at all
SET ROLE regress_fencing_replica_plain;
SET session_replication_role = replica;
RESET ROLE;
-- outside replica role the granted role is fenced as anyone: ZF001, ZF002
SET ROLE regress_fencing_replica_app;
\set VERBOSITY sqlstate
UPDATE rp_fixed SET v = 'stale', tok = 3;
UPDATE rp_row SET v = 'tokenless';
\set VERBOSITY default
RESET ROLE;

-- 3. A superuser under replica (a restore, a replication tool) writes
-- unchecked, as core's own triggers let it: tokenless and stale writes
-- pass, and no mark moves.
SET session_replication_role = replica;
UPDATE rp_fixed SET v = 'superuser, replica' WHERE id = 1;
INSERT INTO rp_col VALUES (4, 'rp-c1', 'superuser, replica', 2);
UPDATE rp_part SET v = 'superuser, replica', tok = 4 WHERE shard = 'rp-b';
DELETE FROM rp_row WHERE id = 1;
TRUNCATE rp_part_c;
RESET session_replication_role;
SELECT * FROM rp_state ORDER BY t COLLATE "C", id;
SELECT scope, mark FROM fencing.scopes ORDER BY scope COLLATE "C";
-- but a superuser session that SET ROLE to another role is that role
SET session_replication_role = replica;
SET ROLE regress_fencing_replica_plain;
\set VERBOSITY sqlstate
UPDATE rp_fixed SET v = 'set role';
\set VERBOSITY default
RESET ROLE;
RESET session_replication_role;

-- 4. health lists the roles other than superusers that may set
-- session_replication_role: the grantee and its member, not the others
SELECT severity, "check", object, action FROM fencing.health
 WHERE "check" = 'may set session_replication_role' AND object LIKE 'regress_fencing_replica%'
 ORDER BY object COLLATE "C";
-- a trigger enabled on origin only (plain ENABLE, as 1.3 made them) is not
-- a working fence: under replica it would not fire
ALTER TABLE rp_fixed ENABLE TRIGGER zz_fence_row;
ALTER TABLE rp_part_b ENABLE TRIGGER zz_fence_truncate;
SELECT relation, enabled, problem FROM fencing.protected_tables ORDER BY relation::text COLLATE "C";
SELECT severity, "check", object, detail, action FROM fencing.health
 WHERE "check" = 'fence not working' ORDER BY object COLLATE "C";
SELECT fencing.protect('rp_fixed', 'tok', scope => 'rp-fixed');
SELECT fencing.protect('rp_part', 'tok', scope_column => 'shard');
SELECT relation, enabled, problem FROM fencing.protected_tables ORDER BY relation::text COLLATE "C";

-- 5. zz_fence_inserted, which makes the raises INSERT ... ON CONFLICT
-- defers, counts.  Disabled on a table with a fixed scope: reported, and an
-- upsert that would raise the mark is refused (1.3 raised the mark at once,
-- for a row DO NOTHING never wrote).
ALTER TABLE rp_fixed DISABLE TRIGGER zz_fence_inserted;
SELECT relation, enabled, problem FROM fencing.protected_tables WHERE relation = 'rp_fixed'::regclass;
SELECT "check", object, detail FROM fencing.health WHERE "check" = 'fence not working' ORDER BY object COLLATE "C";
INSERT INTO rp_fixed VALUES (1, 'conflicts', 9) ON CONFLICT DO NOTHING;
\set VERBOSITY sqlstate
INSERT INTO rp_fixed VALUES (5, 'new row', 9) ON CONFLICT (id) DO UPDATE SET v = excluded.v, tok = excluded.tok;
\set VERBOSITY default
SELECT mark FROM fencing.scopes WHERE scope = 'rp-fixed';
-- an upsert at the mark raises nothing: it needs no AFTER INSERT trigger
INSERT INTO rp_fixed VALUES (6, 'at the mark', 5) ON CONFLICT DO NOTHING;
-- a plain INSERT raises at once, as always
INSERT INTO rp_fixed VALUES (7, 'plain insert', 6);
SELECT mark FROM fencing.scopes WHERE scope = 'rp-fixed';
-- enabled for replica only it does not fire for this session either
ALTER TABLE rp_fixed ENABLE REPLICA TRIGGER zz_fence_inserted;
SELECT problem FROM fencing.protected_tables WHERE relation = 'rp_fixed'::regclass;
\set VERBOSITY sqlstate
INSERT INTO rp_fixed VALUES (1, 'conflicts', 9) ON CONFLICT DO NOTHING;
\set VERBOSITY default
-- enabled on origin it fires here (not under replica): the upsert works, the view still warns
ALTER TABLE rp_fixed ENABLE TRIGGER zz_fence_inserted;
SELECT problem FROM fencing.protected_tables WHERE relation = 'rp_fixed'::regclass;
INSERT INTO rp_fixed VALUES (1, 'conflicts', 9) ON CONFLICT DO NOTHING;
SELECT mark FROM fencing.scopes WHERE scope = 'rp-fixed';
-- dropped: reported, refused; protect() again repairs it
DROP TRIGGER zz_fence_inserted ON rp_fixed;
SELECT relation, enabled, problem FROM fencing.protected_tables WHERE relation = 'rp_fixed'::regclass;
\set VERBOSITY sqlstate
INSERT INTO rp_fixed VALUES (1, 'conflicts', 9) ON CONFLICT DO NOTHING;
\set VERBOSITY default
SELECT fencing.protect('rp_fixed', 'tok', scope => 'rp-fixed');
SELECT relation, enabled, problem FROM fencing.protected_tables WHERE relation = 'rp_fixed'::regclass;
INSERT INTO rp_fixed VALUES (1, 'conflicts', 9) ON CONFLICT DO NOTHING;
INSERT INTO rp_fixed VALUES (8, 'written', 9) ON CONFLICT DO NOTHING;
SELECT mark FROM fencing.scopes WHERE scope = 'rp-fixed';

-- on one partition: reported for that partition; an upsert into it (through
-- the parent or directly) is refused, one into another partition is not
ALTER TABLE rp_part_b DISABLE TRIGGER zz_fence_inserted;
SELECT relation, enabled, problem FROM fencing.protected_tables WHERE relation = 'rp_part'::regclass;
SELECT "check", object, detail FROM fencing.health WHERE "check" = 'fence not working' ORDER BY object COLLATE "C";
INSERT INTO rp_part VALUES (1, 'rp-b', 'conflicts', 9) ON CONFLICT DO NOTHING;
\set VERBOSITY sqlstate
INSERT INTO rp_part_b VALUES (1, 'rp-b', 'conflicts', 9) ON CONFLICT DO NOTHING;
\set VERBOSITY default
INSERT INTO rp_part VALUES (1, 'rp-a', 'conflicts', 9) ON CONFLICT DO NOTHING;
SELECT scope, mark FROM fencing.scopes WHERE scope LIKE 'rp-_' ORDER BY scope COLLATE "C";
-- a partition's clone cannot be dropped alone; dropped on the parent it is
-- gone from every partition
DROP TRIGGER zz_fence_inserted ON rp_part_a;
ALTER TABLE rp_part_b ENABLE ALWAYS TRIGGER zz_fence_inserted;
DROP TRIGGER zz_fence_inserted ON rp_part;
SELECT relation, enabled, problem FROM fencing.protected_tables WHERE relation = 'rp_part'::regclass;
\set VERBOSITY sqlstate
INSERT INTO rp_part VALUES (1, 'rp-c', 'conflicts', 9) ON CONFLICT (shard, id) DO UPDATE SET tok = 9;
\set VERBOSITY default
SELECT fencing.protect('rp_part', 'tok', scope_column => 'shard');
SELECT relation, enabled, problem FROM fencing.protected_tables WHERE relation = 'rp_part'::regclass;
-- a scope column table: the same
ALTER TABLE rp_col DISABLE TRIGGER zz_fence_inserted;
\set VERBOSITY sqlstate
INSERT INTO rp_col VALUES (1, 'rp-c1', 'conflicts', 9) ON CONFLICT DO NOTHING;
\set VERBOSITY default
ALTER TABLE rp_col ENABLE ALWAYS TRIGGER zz_fence_inserted;
INSERT INTO rp_col VALUES (1, 'rp-c1', 'conflicts', 9) ON CONFLICT DO NOTHING;
SELECT scope, mark FROM fencing.scopes WHERE scope LIKE 'rp-c_' ORDER BY scope COLLATE "C";
-- a table fenced per row only has no zz_fence_inserted and needs none
SELECT relation, enabled, problem FROM fencing.protected_tables WHERE relation = 'rp_row'::regclass;
SELECT count(*) AS inserted_triggers FROM pg_trigger
 WHERE tgrelid = 'rp_row'::regclass AND tgname = 'zz_fence_inserted';
SELECT relation, enabled, problem FROM fencing.protected_tables ORDER BY relation::text COLLATE "C";

\c :regress_db
DROP DATABASE fencing_replica;

-- 6. The upgrade from 1.3: the triggers 1.3 made fire on origin only; after
-- ALTER EXTENSION UPDATE they fire ALWAYS (partitions' clones and TRUNCATE
-- triggers too); a disabled one stays disabled, and is reported.
CREATE DATABASE fencing_replica_upgrade;
\c fencing_replica_upgrade
SET client_min_messages = warning;
CREATE EXTENSION fencing VERSION '1.3';
RESET client_min_messages;
CREATE TABLE up_fixed (id int PRIMARY KEY, tok bigint);
SELECT fencing.protect('up_fixed', 'tok', scope => 'up-fixed');
CREATE TABLE up_part (id int, shard text NOT NULL, tok bigint) PARTITION BY LIST (shard);
CREATE TABLE up_part_a PARTITION OF up_part FOR VALUES IN ('a');
SELECT fencing.protect('up_part', 'tok', scope_column => 'shard');
CREATE TABLE up_off (id int PRIMARY KEY, tok bigint);
SELECT fencing.protect('up_off', 'tok');
-- as 1.3 made them: plain ENABLE (origin)
ALTER TABLE up_fixed ENABLE TRIGGER zz_fence_row, ENABLE TRIGGER zz_fence_truncate, ENABLE TRIGGER zz_fence_inserted;
ALTER TABLE up_part ENABLE TRIGGER zz_fence_row, ENABLE TRIGGER zz_fence_truncate, ENABLE TRIGGER zz_fence_inserted;
ALTER TABLE up_part_a ENABLE TRIGGER zz_fence_truncate;
ALTER TABLE up_off DISABLE TRIGGER zz_fence_row, ENABLE TRIGGER zz_fence_truncate;
SELECT tgrelid::regclass AS rel, tgname, tgenabled
  FROM pg_trigger WHERE tgfoid = 'fencing.fence_trigger()'::regprocedure
 ORDER BY tgrelid::regclass::text COLLATE "C", tgname;
SET client_min_messages = error;
ALTER EXTENSION fencing UPDATE TO '1.4';
RESET client_min_messages;
SELECT tgrelid::regclass AS rel, tgname, tgenabled
  FROM pg_trigger WHERE tgfoid = 'fencing.fence_trigger()'::regprocedure
 ORDER BY tgrelid::regclass::text COLLATE "C", tgname;
SELECT relation, enabled, problem FROM fencing.protected_tables ORDER BY relation::text COLLATE "C";
\c :regress_db
DROP DATABASE fencing_replica_upgrade;
REVOKE SET ON PARAMETER session_replication_role FROM regress_fencing_replica_app;
DROP ROLE regress_fencing_replica_member;
DROP ROLE regress_fencing_replica_app;
DROP ROLE regress_fencing_replica_plain;
