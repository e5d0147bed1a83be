-- 55_scope_security: scopes have owners.  Roles: an owner (who may
-- create scopes), a granted writer, a granted leader, a stranger, superusers.
-- Every function and the trigger's raise are checked; each attack tried on 1.2
-- is reproduced, refused with its SQLSTATE, and leaves nothing changed.
\set SHOW_CONTEXT never
SELECT current_user AS su, current_database() AS regress_db \gset

CREATE ROLE regress_fencing_owner;
CREATE ROLE regress_fencing_writer;
CREATE ROLE regress_fencing_leader;
CREATE ROLE regress_fencing_stranger;
CREATE ROLE regress_fencing_monitor IN ROLE pg_monitor;
CREATE ROLE regress_fencing_su SUPERUSER LOGIN;
GRANT EXECUTE ON FUNCTION fencing.create_scope(text, text, regrole) TO regress_fencing_owner;
CREATE SCHEMA regress_fencing_app AUTHORIZATION regress_fencing_owner;
GRANT USAGE, CREATE ON SCHEMA regress_fencing_app TO PUBLIC;
SET search_path = regress_fencing_app, public;

-- what an attack must not change: read as a superuser, no row security
CREATE VIEW public.regress_fencing_state AS
SELECT s.scope, s.mark, s.epoch, s.terms_issued, s.tokens,
       (SELECT count(*) FROM fencing.terms t WHERE t.scope = s.scope) AS terms,
       (SELECT l.holder || '/' || l.term || '/' || l.expires_at FROM fencing.leases l
         WHERE l.scope = s.scope) AS lease,
       (SELECT last_value FROM fencing.epoch_seq) AS clock
  FROM fencing.scopes s;

-- Getting started, as the installing superuser: three lines
CREATE TABLE su_rows (id serial PRIMARY KEY, line text, tok bigint);
SELECT fencing.protect('su_rows', 'tok', scope => 'regress-gs-su');
SELECT fencing.fence_next_epoch('regress-gs-su', 'worker-A') AS t1 \gset
INSERT INTO su_rows (line, tok) VALUES ('from A', :t1);
SELECT fencing.fence_next_epoch('regress-gs-su', 'worker-B') AS t2 \gset
INSERT INTO su_rows (line, tok) VALUES ('from B', :t2);
\set VERBOSITY terse
INSERT INTO su_rows (line, tok) VALUES ('from A again', :t1);
\set VERBOSITY default
\echo :LAST_ERROR_SQLSTATE
SELECT owner::regrole = current_user::regrole AS su_owns, tokens FROM fencing.scopes WHERE scope = 'regress-gs-su';

-- ... and as an application role granted EXECUTE on create_scope (README)
SET ROLE regress_fencing_owner;
CREATE TABLE report_rows (id serial PRIMARY KEY, line text, tok bigint);
SELECT fencing.protect('report_rows', 'tok', scope => 'victim');
SELECT count(*) AS protect_creates_no_scope FROM fencing.scopes WHERE scope = 'victim';
SELECT fencing.fence_next_epoch('victim', 'worker-A') AS v1 \gset
INSERT INTO report_rows (line, tok) VALUES ('from A', :v1);
SELECT fencing.fence_next_epoch('victim', 'worker-B') AS v2 \gset
INSERT INTO report_rows (line, tok) VALUES ('from B', :v2);
\set VERBOSITY terse
INSERT INTO report_rows (line, tok) VALUES ('from A again', :v1);
\set VERBOSITY default
\echo :LAST_ERROR_SQLSTATE
SELECT scope, owner::regrole, tokens, mark = :v2 AS mark_is_v2, terms_issued
  FROM fencing.scopes WHERE scope = 'victim';
-- the owner grants: a writer may raise with tokens, a leader may issue terms
SELECT fencing.grant_scope('victim', 'write', 'regress_fencing_writer');
SELECT fencing.grant_scope('victim', 'write', 'regress_fencing_writer') AS again;
SELECT fencing.grant_scope('victim', 'lead', 'regress_fencing_leader');
SELECT fencing.grant_scope('victim', 'destroy', 'regress_fencing_leader');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.grant_scope('victim', 'read', 'regress_fencing_nobody');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.grant_scope('nowhere', 'read', 'public');
\echo :LAST_ERROR_SQLSTATE
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON report_rows TO PUBLIC;
GRANT USAGE ON SEQUENCE report_rows_id_seq TO PUBLIC;
CREATE TABLE report_skip (id int, tok bigint);
SELECT fencing.protect('report_skip', 'tok', scope => 'victim', on_stale => 'skip');
GRANT SELECT, INSERT ON report_skip TO PUBLIC;
SELECT fencing.create_scope('external-feed', tokens => 'external');
SELECT fencing.create_scope('external-feed');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.create_scope('given-away', owner => 'regress_fencing_stranger');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.create_scope('bad-mode', tokens => 'whatever');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE feed_rows (id int PRIMARY KEY, tok bigint);
SELECT fencing.protect('feed_rows', 'tok', scope => 'external-feed');
GRANT SELECT, INSERT, UPDATE ON feed_rows TO PUBLIC;
SELECT fencing.grant_scope('external-feed', 'write', 'regress_fencing_writer');
RESET ROLE;
SELECT row(v.*)::text AS victim_before FROM public.regress_fencing_state v WHERE scope = 'victim' \gset

-- the leader: terms and leases
SET ROLE regress_fencing_leader;
SELECT fencing.fence_next_epoch('victim', 'leader') AS v3 \gset
SELECT :v3 > :v2 AS leader_issues;
SELECT granted, term > :v3 AS new_term FROM fencing.acquire_lease('victim', 'leader-1', '1 hour');
SELECT term AS v4 FROM fencing.lease_status WHERE scope = 'victim' \gset
SELECT renewed FROM fencing.renew_lease('victim', 'leader-1', :v4, '1 hour');
SELECT scope, holder, live FROM fencing.lease_status;
-- a leader writes at its term (table privileges), but may not raise by a write
INSERT INTO report_rows (line, tok) VALUES ('leader', :v4);
SELECT fencing.reset_mark('victim', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.grant_scope('victim', 'lead', 'regress_fencing_stranger');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT row(v.*)::text AS victim_before FROM public.regress_fencing_state v WHERE scope = 'victim' \gset

-- the writer: writes at the mark; raises only where tokens are external
SET ROLE regress_fencing_writer;
INSERT INTO report_rows (line, tok) VALUES ('writer', :v4);
SELECT fencing.fence_next_epoch('victim');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.acquire_lease('victim', 'writer', '1 minute');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO feed_rows VALUES (1, 1000);
INSERT INTO feed_rows VALUES (2, 999);
\echo :LAST_ERROR_SQLSTATE
SELECT scope, mark FROM fencing.scopes ORDER BY scope COLLATE "C";
-- a table of its own, bound to a scope it may write
CREATE TABLE writer_rows (id int, tok bigint);
SELECT fencing.protect('writer_rows', 'tok', scope => 'external-feed');
SELECT fencing.unprotect('writer_rows');
SELECT fencing.unprotect('report_rows');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- the stranger sees nothing of the scopes, and writes at the mark only
SET ROLE regress_fencing_stranger;
SELECT count(*) AS scopes_seen FROM fencing.scopes;
SELECT count(*) AS terms_seen FROM fencing.terms;
SELECT count(*) AS leases_seen FROM fencing.leases;
SELECT count(*) AS lease_status_seen FROM fencing.lease_status;
SELECT count(*) AS grants_seen FROM fencing.scope_grants;
SELECT fencing.may_read('victim') AS may_read_victim;
INSERT INTO report_rows (line, tok) VALUES ('stranger at the mark', :v4);
SELECT fencing.create_scope('mine');
\echo :LAST_ERROR_SQLSTATE
-- nor manages another's scope, nor reads its mark
SELECT fencing.revoke_scope('victim', 'write', 'regress_fencing_writer');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.alter_scope_tokens('victim', 'external');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.alter_scope_owner('victim', 'regress_fencing_stranger');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.committed_mark('victim') IS NULL AS mark_hidden;
RESET ROLE;
-- a superuser cannot give a scope to a role that does not exist
SELECT fencing.alter_scope_owner('victim', 999999::oid::regrole);
\echo :LAST_ERROR_SQLSTATE
SET ROLE regress_fencing_monitor;
SELECT fencing.committed_mark('victim') IS NOT NULL AS monitor_reads_mark;
RESET ROLE;
SET ROLE regress_fencing_monitor;
SELECT count(*) > 0 AS monitor_sees_scopes FROM fencing.scopes WHERE scope = 'victim';
RESET ROLE;
SELECT row(v.*)::text = :'victim_before' AS victim_unchanged_by_writes_at_mark
  FROM public.regress_fencing_state v WHERE scope = 'victim';

-- Attack 1: fence another role's leader
SET ROLE regress_fencing_stranger;
SELECT fencing.fence_next_epoch('victim', 'thief');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.acquire_lease('victim', 'thief', '1 hour');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.renew_lease('victim', 'leader-1', :v4, '1 day');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.release_lease('victim', 'leader-1', :v4);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT row(v.*)::text = :'victim_before' AS victim_unchanged
  FROM public.regress_fencing_state v WHERE scope = 'victim';

-- Attack 2: lock the victim out with token 2^63-1
SET ROLE regress_fencing_stranger;
CREATE TEMP TABLE squat (tok bigint);
SELECT fencing.protect('squat', 'tok', scope => 'victim');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO report_rows (line, tok) VALUES ('lockout', 9223372036854775807);
\echo :LAST_ERROR_SQLSTATE
UPDATE report_rows SET tok = 9223372036854775807;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fencing.use_token('victim', 9223372036854775807);
TRUNCATE report_rows;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- a granted writer cannot either: the scope's tokens are issued
\set VERBOSITY terse
SET ROLE regress_fencing_writer;
INSERT INTO report_rows (line, tok) VALUES ('lockout', 9223372036854775807);
\set VERBOSITY default
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT row(v.*)::text = :'victim_before' AS victim_unchanged
  FROM public.regress_fencing_state v WHERE scope = 'victim';

-- Attack 3: drag or exhaust the clock for everyone.  An external scope at
-- the largest token has no term left; no other scope is affected, its owner
-- repairs it; and a token of 10^12 moves nobody else's terms.
SET ROLE regress_fencing_writer;
INSERT INTO feed_rows VALUES (3, 1000000000000);
RESET ROLE;
SELECT last_value AS clock_before FROM fencing.epoch_seq \gset
SET ROLE regress_fencing_leader;
SELECT fencing.fence_next_epoch('victim') < 1000000000000 AS victim_terms_not_dragged;
RESET ROLE;
SET ROLE regress_fencing_writer;
UPDATE feed_rows SET tok = 9223372036854775807 WHERE id = 3;
RESET ROLE;
SET ROLE regress_fencing_owner;
SELECT fencing.fence_next_epoch('external-feed');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT last_value = :clock_before + 1 AS clock_moved_only_by_one_term FROM fencing.epoch_seq;
SET ROLE regress_fencing_leader;
SELECT fencing.fence_next_epoch('victim') = :clock_before + 2 AS other_scopes_unaffected;
SELECT granted FROM fencing.acquire_lease('victim', 'leader-1', '1 hour');
RESET ROLE;
SET ROLE regress_fencing_owner;
SELECT fencing.reset_mark('external-feed', 1000000000000) = 9223372036854775807 AS repaired_from_max;
SELECT fencing.fence_next_epoch('external-feed') = 1000000000001 AS terms_resume_above_mark;
RESET ROLE;
SELECT row(v.*)::text AS victim_before FROM public.regress_fencing_state v WHERE scope = 'victim' \gset

-- Attack 4: hold locks on relations one does not own
SET ROLE regress_fencing_stranger;
BEGIN;
SELECT fencing.unprotect('pg_catalog.pg_authid');
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.unprotect('report_rows');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.protect('report_rows', 'tok', scope => 'victim');
\echo :LAST_ERROR_SQLSTATE
-- the event trigger's function takes no argument a caller could forge
-- (1.5: it reads the command it was fired for itself); PUBLIC may not call it
SELECT fencing.fence_new_partitions();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT p.oid::regprocedure AS internal_function,
       has_function_privilege('regress_fencing_stranger', p.oid, 'EXECUTE') AS public_may_execute
  FROM pg_proc p
 WHERE p.pronamespace = 'fencing'::regnamespace
   AND p.proname IN ('protect_new_partitions', 'forget_cached_marks',
                     'fence_new_partitions', 'create_scope', 'fence_older_timelines')
 ORDER BY p.oid::regprocedure::text COLLATE "C";
-- the superuser holds such a lock only when it asks to
BEGIN;
SELECT fencing.unprotect('pg_catalog.pg_authid');
SELECT mode FROM pg_locks WHERE relation = 'pg_catalog.pg_authid'::regclass AND pid = pg_backend_pid();
ROLLBACK;
-- an ordinary owner's new partition: Postgres clones the row trigger with
-- the creator's rights, EXECUTE on fencing.fence_trigger() included, which
-- PUBLIC no longer has (1.4); protect() grants it to the owner of every
-- table it fences (the fence checks the owner's right to the scope at
-- each write, whoever made the trigger)
SET ROLE regress_fencing_owner;
SELECT has_function_privilege('fencing.fence_trigger()', 'EXECUTE') AS may_execute_fence;
CREATE TABLE parted (id int, tok bigint) PARTITION BY RANGE (id);
SELECT fencing.protect('parted', 'tok', scope => 'victim');
SELECT has_function_privilege('fencing.fence_trigger()', 'EXECUTE') AS may_execute_fence;
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (10);
SELECT tgname FROM pg_trigger WHERE tgrelid = 'parted_1'::regclass ORDER BY 1;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION fencing.fence_trigger() FROM regress_fencing_owner;

-- Attack 8: hold another application's scope through a scope column of
-- one's own table (its share lock would stall the scope's takeovers, and
-- ZF001 would tell its mark): refused before any lock, as protect() refuses
-- a constant scope, unless the table's owner may write to the scope
SELECT mark AS vm FROM fencing.scopes WHERE scope = 'victim' \gset
GRANT CREATE ON SCHEMA public TO regress_fencing_stranger;
SET ROLE regress_fencing_stranger;
CREATE TABLE stranger_rows (id int, scope text, tok bigint);
SELECT fencing.protect('stranger_rows', 'tok', scope_column => 'scope');
BEGIN;
INSERT INTO stranger_rows VALUES (1, 'victim', :vm);
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
-- a stale token gets the same answer, not the mark
INSERT INTO stranger_rows VALUES (2, 'victim', 1);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- the scope's owner grants write: the table may name it (at once)
SET ROLE regress_fencing_owner;
SELECT fencing.grant_scope('victim', 'write', 'regress_fencing_stranger');
RESET ROLE;
SET ROLE regress_fencing_stranger;
INSERT INTO stranger_rows VALUES (1, 'victim', :vm);
SELECT id, scope, tok = :vm AS at_mark FROM stranger_rows;
RESET ROLE;
-- and revokes it: refused again, also for TRUNCATE (its rows name the scope)
SET ROLE regress_fencing_owner;
SELECT fencing.revoke_scope('victim', 'write', 'regress_fencing_stranger');
RESET ROLE;
SET ROLE regress_fencing_stranger;
INSERT INTO stranger_rows VALUES (3, 'victim', :vm);
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fencing.use_token('victim', :vm);
TRUNCATE stranger_rows;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- a grant written into fencing.scope_grants directly is seen at once too
INSERT INTO fencing.scope_grants (scope, grantee, privilege, granted_by)
  VALUES ('victim', 'regress_fencing_stranger'::regrole, 'write', 'regress_fencing_owner'::regrole);
SET ROLE regress_fencing_stranger;
INSERT INTO stranger_rows VALUES (4, 'victim', :vm);
RESET ROLE;
DELETE FROM fencing.scope_grants WHERE grantee = 'regress_fencing_stranger'::regrole;
SET ROLE regress_fencing_stranger;
INSERT INTO stranger_rows VALUES (5, 'victim', :vm);
\echo :LAST_ERROR_SQLSTATE
SELECT id FROM stranger_rows ORDER BY id;
DROP TABLE stranger_rows;
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM regress_fencing_stranger;
SELECT row(v.*)::text = :'victim_before' AS victim_unchanged_by_scope_column
  FROM public.regress_fencing_state v WHERE scope = 'victim';

-- Attack 6: a bypass outlives its transaction
CREATE TABLE bypass_rows (id int PRIMARY KEY, tok bigint);
SELECT fencing.protect('bypass_rows', 'tok', scope => 'regress-gs-su');
INSERT INTO bypass_rows VALUES (1, :t2);
SET fencing.bypass = on;
SHOW fencing.bypass;
UPDATE bypass_rows SET id = 2;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET fencing.bypass = on;
UPDATE bypass_rows SET id = 3;
COMMIT;
UPDATE bypass_rows SET id = 4;
\echo :LAST_ERROR_SQLSTATE
RESET fencing.bypass;
BEGIN;
SET LOCAL fencing.bypass = on;
UPDATE bypass_rows SET id = 5;
COMMIT;
SELECT id, tok = :t2 AS token_kept FROM bypass_rows;
ALTER ROLE regress_fencing_su SET fencing.bypass = on;
\c - regress_fencing_su
\set SHOW_CONTEXT never
SHOW fencing.bypass;
UPDATE regress_fencing_app.bypass_rows SET id = 6;
\echo :LAST_ERROR_SQLSTATE
\c - :su
\set SHOW_CONTEXT never
SET search_path = regress_fencing_app, public;
ALTER ROLE regress_fencing_su RESET fencing.bypass;

-- Attack 7: a typo or a hard-coded token in a scope the clock drives
-- (terse: the DETAIL names the latest term, which depends on earlier tests)
\set VERBOSITY terse
SET ROLE regress_fencing_writer;
INSERT INTO report_rows (line, tok) VALUES ('typo', 17000000000);
\echo :LAST_ERROR_SQLSTATE
-- not skipped silently by the skip policy either
INSERT INTO report_skip VALUES (1, 17000000000);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT fencing.use_token('victim', 17000000000);
INSERT INTO report_rows (line, tok) VALUES ('superuser typo', 17000000000);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT row(v.*)::text = :'victim_before' AS victim_unchanged
  FROM public.regress_fencing_state v WHERE scope = 'victim';

-- repair: after a reset below the latest term, a write with a term issued
-- for the scope raises it back; a number never issued is still refused
SET ROLE regress_fencing_owner;
SELECT epoch AS latest FROM fencing.scopes WHERE scope = 'victim' \gset
SET client_min_messages = warning;  -- the NOTICE names terms
SELECT fencing.reset_mark('victim', :v1) = :latest AS reset_from_latest;
RESET client_min_messages;
RESET ROLE;
SET ROLE regress_fencing_writer;
\set VERBOSITY terse
INSERT INTO report_rows (line, tok) VALUES ('never issued', 999999999);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
INSERT INTO report_rows (line, tok) VALUES ('an issued term', :latest - 1);
SELECT mark = :latest - 1 AS mark_raised_to_issued_term FROM fencing.scopes WHERE scope = 'victim';
INSERT INTO report_rows (line, tok) VALUES ('latest term', :latest);
SELECT mark = :latest AS mark_back_at_latest FROM fencing.scopes WHERE scope = 'victim';
RESET ROLE;

-- ownership: handed over, then only the new owner decides
SET ROLE regress_fencing_owner;
SELECT fencing.alter_scope_owner('victim', 'regress_fencing_leader');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.revoke_scope('victim', 'write', 'regress_fencing_writer');
SELECT fencing.revoke_scope('victim', 'write', 'regress_fencing_writer') AS again;
SELECT fencing.alter_scope_tokens('external-feed', 'issued');
SELECT tokens FROM fencing.scopes WHERE scope = 'external-feed';
RESET ROLE;
SELECT fencing.alter_scope_owner('victim', 'regress_fencing_leader');
SELECT owner::regrole FROM fencing.scopes WHERE scope = 'victim';
SET ROLE regress_fencing_owner;
SELECT fencing.grant_scope('victim', 'read', 'public');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SET ROLE regress_fencing_leader;
SELECT fencing.grant_scope('victim', 'read', 'public');
RESET ROLE;
SET ROLE regress_fencing_stranger;
SELECT scope FROM fencing.scopes WHERE scope = 'victim';
RESET ROLE;

-- Attack 5: a schema "fencing" prepared by a non-superuser database owner
CREATE ROLE regress_fencing_dbowner;
CREATE DATABASE regress_fencing_guard OWNER regress_fencing_dbowner;
\c regress_fencing_guard
\set SHOW_CONTEXT never
SET ROLE regress_fencing_dbowner;
CREATE SCHEMA fencing;
RESET ROLE;
CREATE EXTENSION fencing;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS installed FROM pg_extension WHERE extname = 'fencing';
SELECT count(*) AS objects_left FROM pg_class WHERE relnamespace = 'fencing'::regnamespace;
DROP SCHEMA fencing;
-- a superuser's schema open to others, or already holding something
CREATE SCHEMA fencing;
GRANT CREATE ON SCHEMA fencing TO PUBLIC;
CREATE EXTENSION fencing;
\echo :LAST_ERROR_SQLSTATE
REVOKE CREATE ON SCHEMA fencing FROM PUBLIC;
CREATE FUNCTION fencing.use_token(text, integer) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
CREATE EXTENSION fencing;
\echo :LAST_ERROR_SQLSTATE
DROP FUNCTION fencing.use_token(text, integer);
-- an empty schema of a superuser, nobody else's: fine
CREATE EXTENSION fencing;
SELECT extversion FROM pg_extension WHERE extname = 'fencing';
\c :regress_db :su
DROP DATABASE regress_fencing_guard;

-- cleanup (the lease row too, so that later tests list only their own)
\set SHOW_CONTEXT never
DELETE FROM fencing.leases WHERE scope = 'victim';
DROP VIEW public.regress_fencing_state;
DROP TABLE regress_fencing_app.su_rows, regress_fencing_app.bypass_rows;
DROP OWNED BY regress_fencing_owner, regress_fencing_writer, regress_fencing_leader,
  regress_fencing_stranger, regress_fencing_monitor, regress_fencing_su, regress_fencing_dbowner;
DROP ROLE regress_fencing_owner, regress_fencing_writer, regress_fencing_leader,
  regress_fencing_stranger, regress_fencing_monitor, regress_fencing_su, regress_fencing_dbowner;
