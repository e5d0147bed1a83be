-- 18_restored_fence: a fence restored without the extension's data moves
-- the epoch clock (src/trigger/restored_fence.c).  A dump of the
-- application's schema alone (pg_dump -n app) brings back the fence's
-- triggers and rows written under the source's terms, but not the clock
-- and the scopes: restored into a database with a fresh extension, the
-- first term would be the source's first term again.  The rows' highest
-- token, above every mark and term of the database, is recorded as a claim
-- by an unknown server: the next term moves above it.  Its own databases:
-- the terms it takes do not shift the other files' numbers.
\set SHOW_CONTEXT never
\set band 1099511627776
SELECT current_database() AS regress_db \gset
-- the application's schema, in the source and in the restore
\set app_schema 'CREATE SCHEMA app; CREATE TABLE app.jobs (id int PRIMARY KEY, tok bigint, v text); CREATE TABLE app.rows (id int PRIMARY KEY, tok int, v text); CREATE TABLE app.parted (id int, tok bigint, v text) PARTITION BY RANGE (id); CREATE TABLE app.parted_1 PARTITION OF app.parted FOR VALUES FROM (0) TO (100); CREATE TABLE app.parted_2 PARTITION OF app.parted FOR VALUES FROM (100) TO (200);'
-- the source: a scope table, a per-row table and a partitioned one, whose
-- rows carry terms of timeline 3's band (a source that failed over twice)
CREATE DATABASE fencing_restored_src;
\c fencing_restored_src
SET client_min_messages = error;
CREATE EXTENSION fencing;
RESET client_min_messages;
:app_schema
SELECT fencing.protect('app.jobs', 'tok', scope => 'jobs');
SELECT fencing.protect('app.rows', 'tok');
SELECT fencing.protect('app.parted', 'tok', scope => 'parted');
-- the triggers as pg_dump writes them (the parent's row trigger, each
-- partition's TRUNCATE trigger; the partitions' row triggers are clones)
SELECT string_agg(pg_get_triggerdef(t.oid) || ';', E'\n' ORDER BY t.tgrelid::regclass::text, t.tgname) AS triggers
  FROM pg_trigger t
 WHERE t.tgrelid IN ('app.jobs'::regclass, 'app.rows'::regclass, 'app.parted'::regclass,
                     'app.parted_1'::regclass, 'app.parted_2'::regclass)
   AND t.tgparentid = 0 \gset
\c :regress_db
DROP DATABASE fencing_restored_src;

-- restored into a new database whose extension is fresh: the schema, the
-- rows (the highest token in a partition: 2 bands + 5 above timeline 1's),
-- then the triggers, as a superuser
CREATE DATABASE fencing_restored;
\c fencing_restored
SET client_min_messages = error;
CREATE EXTENSION fencing;
RESET client_min_messages;
:app_schema
INSERT INTO app.jobs VALUES (1, 2 * :band + 1, 'a'), (2, 2 * :band + 2, 'b');
INSERT INTO app.rows VALUES (1, 7, 'a');
INSERT INTO app.parted VALUES (5, 2 * :band + 3, 'a'), (150, 2 * :band + 5, 'b');
-- a scope of a lock service's tokens already there, far above the rows'
-- tokens: another table's scope, it does not hide them
SELECT fencing.create_scope('lock_service', tokens => 'external');
SELECT fencing.takeover('lock_service', 1000000000000000);
SELECT count(*) AS clock_rows FROM fencing.clock;
:triggers
-- one claim, by an unknown server, in the band of the first table's highest
-- token (the other tables' are in or below it: they record none)
SELECT generation, band_offset, system_identifier, database_oid, clock_oid, timeline,
       claimed_at = '2000-01-01 00:00:00+00' AS at_the_start, reason
  FROM fencing.clock;
SELECT state, claimed_system_identifier FROM fencing.clock_state();
SELECT severity, "check" FROM fencing.health WHERE object = 'fencing.clock';
-- the first term moves above it: generation 2 + 1 + 16, later by the time
-- since 2000-01-01 (more than 700 bands of 12.7 days)
SELECT fencing.fence_next_epoch('jobs') AS first_term \gset
SELECT :first_term > (2 + 1 + 16 + 700) * :band AS above_the_rows;
SELECT state, reason FROM fencing.clock_state();
-- the source's leader, fenced: the restored rows' tokens are stale now,
-- the new term writes
-- (terse: the mark is later by the time since 2000-01-01)
\set VERBOSITY terse
UPDATE app.jobs SET v = 'stale', tok = 2 * :band + 2 WHERE id = 2;
\set VERBOSITY default
UPDATE app.jobs SET v = 'new', tok = :first_term WHERE id = 2;
SELECT id, v FROM app.jobs ORDER BY id;

-- rows below the marks the database knows (a whole database restored: its
-- marks come before its triggers): nothing recorded
CREATE TABLE app.known (id int PRIMARY KEY, tok bigint);
INSERT INTO app.known VALUES (1, :first_term);
SELECT count(*) AS claims_before FROM fencing.clock;
SELECT replace(pg_get_triggerdef(t.oid), 'app.jobs', 'app.known') || ';' AS known_trigger
  FROM pg_trigger t WHERE t.tgrelid = 'app.jobs'::regclass AND t.tgname = 'zz_fence_row' \gset
:known_trigger
SELECT count(*) AS claims_after FROM fencing.clock;

-- protect() of a table with rows above every mark (its DDL runs as the
-- table's owner in a security-restricted operation): nothing recorded
CREATE TABLE app.legacy (id int PRIMARY KEY, tok bigint);
INSERT INTO app.legacy VALUES (1, 9 * :band);
SELECT fencing.protect('app.legacy', 'tok');
SELECT count(*) AS claims_after_protect FROM fencing.clock;

-- a role that is not a superuser making the fence by hand on its own
-- table (it may: it owns a protected table) records nothing: an ordinary
-- role cannot move the clock (its own session: a superuser's session under
-- SET ROLE is a superuser's, below)
SELECT current_user AS superuser_name \gset
CREATE ROLE regress_restored_owner LOGIN;
GRANT CREATE, USAGE ON SCHEMA app TO regress_restored_owner;
\c - regress_restored_owner
CREATE TABLE app.own (id int PRIMARY KEY, tok bigint);
SELECT fencing.protect('app.own', 'tok');
CREATE TABLE app.own2 (id int PRIMARY KEY, tok bigint);
INSERT INTO app.own2 VALUES (1, 9 * :band);
CREATE TRIGGER zz_fence_row BEFORE INSERT OR UPDATE OR DELETE ON app.own2
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('{tok,error,row}');
-- nor its SECURITY DEFINER function that makes one, called by a superuser
-- (it runs as its owner, who cannot become the superuser)
CREATE TABLE app.own3 (id int PRIMARY KEY, tok bigint);
INSERT INTO app.own3 VALUES (1, 9 * :band);
CREATE FUNCTION app.fence_own3() RETURNS void LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog AS $$
BEGIN
  CREATE TRIGGER zz_fence_row BEFORE INSERT OR UPDATE OR DELETE ON app.own3
    FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('{tok,error,row}');
END $$;
\c - :superuser_name
SELECT app.fence_own3();
SELECT count(*) AS claims_after_ordinary_role FROM fencing.clock;

-- tokens of a lock service at 2^62 or above (past half of the bands: they
-- would use up the bands of every later move): nothing recorded, the clock
-- keeps issuing where it was
CREATE TABLE app.external (id int PRIMARY KEY, tok bigint);
INSERT INTO app.external VALUES (1, 4611686018427387904);
SELECT replace(pg_get_triggerdef(t.oid), 'app.rows', 'app.external') || ';' AS external_trigger
  FROM pg_trigger t WHERE t.tgrelid = 'app.rows'::regclass AND t.tgname = 'zz_fence_row' \gset
:external_trigger
SELECT count(*) AS claims_after_external FROM fencing.clock;
SELECT fencing.fence_next_epoch('jobs') = :first_term + 1 AS still_issues;

-- a superuser's restore that creates each trigger as the table's owner
-- (pg_restore --use-set-session-authorization, or --role): the session is
-- a superuser's, which could RESET SESSION AUTHORIZATION; the rows' tokens
-- above every term are recorded (nothing was, before)
SELECT pg_catalog.max(epoch) / :band + 3 AS above_band FROM fencing.scopes \gset
CREATE TABLE app.ssa (id int PRIMARY KEY, tok bigint);
INSERT INTO app.ssa VALUES (1, :above_band * :band);
ALTER TABLE app.ssa OWNER TO regress_restored_owner;
CREATE TABLE app.setrole (id int PRIMARY KEY, tok bigint);
INSERT INTO app.setrole VALUES (1, (:above_band + 1) * :band);
ALTER TABLE app.setrole OWNER TO regress_restored_owner;
-- (quiet: the NOTICE names the generation, later by the time since 2000)
SET client_min_messages = warning;
SET SESSION AUTHORIZATION regress_restored_owner;
CREATE TRIGGER zz_fence_row BEFORE INSERT OR UPDATE OR DELETE ON app.ssa
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('{tok,error,row}');
RESET SESSION AUTHORIZATION;
SELECT generation = :above_band AS in_the_rows_band, system_identifier, reason
  FROM fencing.clock ORDER BY generation DESC LIMIT 1;
SET ROLE regress_restored_owner;
CREATE TRIGGER zz_fence_row BEFORE INSERT OR UPDATE OR DELETE ON app.setrole
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('{tok,error,row}');
RESET ROLE;
RESET client_min_messages;
SELECT generation = :above_band + 1 AS in_the_rows_band, system_identifier, reason
  FROM fencing.clock ORDER BY generation DESC LIMIT 1;
-- a session named as Citus names its own connections, without Citus (a
-- database's owner may make the name every session's default): recorded
CREATE TABLE app.named (id int PRIMARY KEY, tok bigint);
INSERT INTO app.named VALUES (1, (:above_band + 2) * :band);
SET client_min_messages = warning;
SET application_name = 'citus_internal gpid=1';
CREATE TRIGGER zz_fence_row BEFORE INSERT OR UPDATE OR DELETE ON app.named
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('{tok,error,row}');
RESET application_name;
RESET client_min_messages;
SELECT generation = :above_band + 2 AS in_the_rows_band, system_identifier
  FROM fencing.clock ORDER BY generation DESC LIMIT 1;
SELECT fencing.fence_next_epoch('jobs') > (:above_band + 2 + 1 + 16) * :band AS above_the_rows;

-- a data-only restore with --disable-triggers into a schema that already
-- has its fence (made by the application's migrations): pg_restore
-- disables every trigger of a table, loads its rows, and enables them
-- again (ENABLE TRIGGER ALL, as a superuser); the rows' tokens above every
-- term are recorded then.  Disabling records nothing; an ordinary role
-- enabling its own table's triggers records nothing.
CREATE TABLE app.loaded (id int PRIMARY KEY, tok bigint);
SELECT fencing.protect('app.loaded', 'tok');
SELECT count(*) AS claims_before_load, pg_catalog.max(s.epoch) / :band + 3 AS load_band
  FROM fencing.clock, (SELECT pg_catalog.max(epoch) AS epoch FROM fencing.scopes) AS s \gset
ALTER TABLE app.loaded DISABLE TRIGGER ALL;
INSERT INTO app.loaded VALUES (1, :load_band * :band);
SELECT count(*) - :claims_before_load AS claims_while_disabled FROM fencing.clock;
SET client_min_messages = warning;
ALTER TABLE app.loaded ENABLE TRIGGER ALL;
RESET client_min_messages;
SELECT generation = :load_band AS in_the_rows_band, system_identifier, reason
  FROM fencing.clock ORDER BY generation DESC LIMIT 1;
SELECT fencing.fence_next_epoch('jobs') > (:load_band + 1 + 16) * :band AS above_the_rows;
-- ENABLE TRIGGER ALL leaves the fence firing in origin mode only: said,
-- and ENABLE ALWAYS TRIGGER (the runbook's step) mends it
SELECT enabled, problem FROM fencing.protected_tables WHERE relation = 'app.loaded'::regclass;
ALTER TABLE app.loaded ENABLE ALWAYS TRIGGER zz_fence_row, ENABLE ALWAYS TRIGGER zz_fence_truncate;
SELECT enabled, problem FROM fencing.protected_tables WHERE relation = 'app.loaded'::regclass;
SELECT count(*) AS claims_before_owner_enables FROM fencing.clock \gset
\c - regress_restored_owner
ALTER TABLE app.own DISABLE TRIGGER ALL;
INSERT INTO app.own VALUES (1, 9000 * :band);
ALTER TABLE app.own ENABLE TRIGGER ALL;
\c - :superuser_name
SELECT count(*) - :claims_before_owner_enables AS claims_after_owner_enables FROM fencing.clock;

-- the enabling of another trigger (the fence's TRUNCATE trigger, as a
-- whole-database restore enables each ALWAYS; an application's own) reads
-- nothing: the fence judged every row written since it was enabled (a
-- per-row table takes any token in a new row), and the read would be a
-- full scan under the ALTER TABLE's lock
CREATE TABLE app.live (id int PRIMARY KEY, tok bigint);
SELECT fencing.protect('app.live', 'tok');
SELECT count(*) AS claims_before_live, pg_catalog.max(s.epoch) / :band + 3 AS live_band
  FROM fencing.clock, (SELECT pg_catalog.max(epoch) AS epoch FROM fencing.scopes) AS s \gset
INSERT INTO app.live VALUES (1, :live_band * :band);
ALTER TABLE app.live ENABLE ALWAYS TRIGGER zz_fence_truncate;
SELECT count(*) - :claims_before_live AS claims_after_other_trigger FROM fencing.clock;
-- a table with two fence row triggers (two token columns, made by hand):
-- each one's column is read, by ENABLE TRIGGER ALL and by the second's name
CREATE TABLE app.two (id int PRIMARY KEY, tok bigint, tok2 bigint);
CREATE TRIGGER zz_fence_row BEFORE INSERT OR UPDATE OR DELETE ON app.two
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('{tok,error,row}');
CREATE TRIGGER zz_fence_row2 BEFORE INSERT OR UPDATE OR DELETE ON app.two
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('{tok2,error,row}');
ALTER TABLE app.two DISABLE TRIGGER ALL;
INSERT INTO app.two VALUES (1, 1, (:live_band + 1) * :band);
SET client_min_messages = warning;
ALTER TABLE app.two ENABLE TRIGGER ALL;
RESET client_min_messages;
SELECT generation = :live_band + 1 AS in_the_second_columns_band
  FROM fencing.clock ORDER BY generation DESC LIMIT 1;
ALTER TABLE app.two DISABLE TRIGGER zz_fence_row2;
INSERT INTO app.two VALUES (2, 1, (:live_band + 2) * :band);
SET client_min_messages = warning;
ALTER TABLE app.two ENABLE TRIGGER zz_fence_row2;
RESET client_min_messages;
SELECT generation = :live_band + 2 AS in_the_second_columns_band
  FROM fencing.clock ORDER BY generation DESC LIMIT 1;

-- a superuser's rows written unchecked under session_replication_role =
-- replica (a logical copy's apply, a data-only restore): a token above the
-- issued terms is recorded once per band; one rolled back to a savepoint
-- takes its claim with it, and the same token written again records it
-- again (the backend forgets what the rolled-back claim covered).
-- app.legacy: protect() made its fence, which fires ALWAYS (a restore
-- enables it so with ALTER TABLE ... ENABLE ALWAYS TRIGGER)
SELECT count(*) AS claims_before_replica FROM fencing.clock \gset
BEGIN;
SET LOCAL session_replication_role = replica;
SAVEPOINT s;
INSERT INTO app.legacy VALUES (20, 10000 * :band);
ROLLBACK TO SAVEPOINT s;
INSERT INTO app.legacy VALUES (21, 10000 * :band);
INSERT INTO app.legacy VALUES (22, 10000 * :band + 1);
COMMIT;
SELECT count(*) - :claims_before_replica AS claims_added, max(generation) AS generation
  FROM fencing.clock;
SELECT count(*) AS unknown_claims_in_its_band FROM fencing.clock
 WHERE system_identifier = 0 AND generation = 10000;

\c :regress_db
DROP DATABASE fencing_restored;
DROP ROLE regress_restored_owner;
