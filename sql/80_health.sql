-- 80_health: marks, leases and health, each shown
-- where 1.1 failed.  Its own database: it takes terms and many scopes.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
CREATE DATABASE fencing_health;
\c fencing_health
SET client_min_messages = warning;
CREATE EXTENSION fencing;
RESET client_min_messages;

-- 1. one transaction writing 20,000 scopes, under the default
--    max_locks_per_transaction (1.1: "out of shared memory", one lock per scope)
SHOW max_locks_per_transaction;
CREATE TABLE tenant_rows (tenant text, id int, tok bigint);
SELECT fencing.protect('tenant_rows', 'tok', scope_column => 'tenant');
-- new tenants: every row raises (and creates) its scope
INSERT INTO tenant_rows SELECT 'tenant-' || g, g, 7 FROM generate_series(1, 20000) g;
SELECT count(*) AS scopes, min(mark), max(mark), min(tokens), max(tokens)
  FROM fencing.scopes WHERE scope LIKE 'tenant-%';
-- at the mark, in one transaction: the locks it holds stay bounded
BEGIN;
INSERT INTO tenant_rows SELECT 'tenant-' || g, g, 7 FROM generate_series(1, 20000) g;
SELECT count(*) FILTER (WHERE locktype = 'advisory' AND objsubid = -511) <= 32 AS scope_locks_bounded,
       bool_or(locktype = 'advisory' AND objsubid = -508 AND mode = 'ShareLock'
               AND objid = (SELECT oid FROM pg_roles WHERE rolname = current_user))
         AS beyond_32_by_the_owner
  FROM pg_locks WHERE pid = pg_backend_pid();
COMMIT;
-- a stale token is still refused for a scope locked by its owner's lock
BEGIN;
INSERT INTO tenant_rows SELECT 'tenant-' || g, g, 7 FROM generate_series(1, 100) g;
INSERT INTO tenant_rows VALUES ('tenant-99', 99, 6);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT count(*) AS rows_written FROM tenant_rows;

-- 2. takeover(): an external token fences at once
SELECT fencing.create_scope('etcd-job', tokens => 'external');
CREATE TABLE job_rows (id int PRIMARY KEY, tok bigint);
SELECT fencing.protect('job_rows', 'tok', scope => 'etcd-job');
INSERT INTO job_rows VALUES (1, 100);                        -- the old holder, revision 100
SELECT fencing.takeover('etcd-job', 250) AS previous_mark;  -- the new holder, revision 250, before writing
UPDATE job_rows SET tok = 100 WHERE id = 1;                  -- the old holder: fenced
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.takeover('etcd-job', 250) AS retried;         -- the same token again: nothing changes
SELECT fencing.takeover('etcd-job', 200);                    -- below the mark
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.takeover('etcd-new', 5) IS NULL AS new_scope;
SELECT tokens, mark FROM fencing.scopes WHERE scope = 'etcd-new';
SELECT fencing.takeover('etcd-job', -1);
SELECT fencing.takeover(NULL, 1);
SELECT fencing.takeover('', 1);
-- an 'issued' scope takes only its terms
SELECT fencing.fence_next_epoch('issued-job') AS i1 \gset
SELECT fencing.takeover('issued-job', :i1 + 1000);
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.takeover('issued-job', :i1) = :i1 AS own_term_is_fine;
-- privileges: write on the scope
CREATE ROLE regress_health_worker;
CREATE ROLE regress_health_monitor IN ROLE pg_monitor;
SET ROLE regress_health_worker;
SELECT fencing.takeover('etcd-job', 300);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.health;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT fencing.grant_scope('etcd-job', 'write', 'regress_health_worker');
SET ROLE regress_health_worker;
SELECT fencing.takeover('etcd-job', 300) AS previous_mark;
RESET ROLE;
-- durable: the raise commits synchronously whatever the session says; the
-- rule is applied at commit (test/tap/005_sync_failover.pl shows the commit
-- waiting for a stopped synchronous standby)
SET synchronous_commit = off;
BEGIN;
SELECT fencing.takeover('etcd-job', 301) AS previous_mark;
COMMIT;
RESET synchronous_commit;

-- 3. leases agree with the fence
SELECT term AS l1 FROM fencing.acquire_lease('leased', 'node-a', '1 hour') \gset
SELECT live, fenced FROM fencing.lease_status WHERE scope = 'leased';
SELECT fencing.fence_next_epoch('leased', 'someone-else') > :l1 AS fenced_by_a_term;
SELECT live, fenced FROM fencing.lease_status WHERE scope = 'leased';
SELECT renewed FROM fencing.renew_lease('leased', 'node-a', :l1, '1 hour');
SELECT granted, term > :l1 AS new_term FROM fencing.acquire_lease('leased', 'node-a', '1 hour');
-- a higher token written (a scope that also takes external tokens)
SELECT term AS l2 FROM fencing.lease_status WHERE scope = 'leased' \gset
SELECT fencing.alter_scope_tokens('leased', 'external');
CREATE TABLE leased_rows (id int, tok bigint);
SELECT fencing.protect('leased_rows', 'tok', scope => 'leased');
INSERT INTO leased_rows VALUES (1, :l2 + 10);
SELECT live, fenced FROM fencing.lease_status WHERE scope = 'leased';
SELECT granted, lease_holder, term > :l2 + 10 AS above_the_token
  FROM fencing.acquire_lease('leased', 'node-b', '1 hour');

-- 4. health: one row per finding
-- a fresh lease, then fenced: "lease held by a fenced holder"
SELECT term AS h1 FROM fencing.acquire_lease('health-lease', 'node-h', '1 hour') \gset
SELECT fencing.fence_next_epoch('health-lease', 'other') > :h1 AS fenced;
-- a fence turned off, a partition without its fence, an inheritance child
CREATE TABLE off_rows (id int, tok bigint);
SELECT fencing.protect('off_rows', 'tok', scope => 'etcd-job');
ALTER TABLE off_rows DISABLE TRIGGER zz_fence_row;
CREATE TABLE parted (id int, tok bigint) PARTITION BY RANGE (id);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (10);
SELECT fencing.protect('parted', 'tok', scope => 'etcd-job');
ALTER TABLE parted_1 DISABLE TRIGGER zz_fence_row;
CREATE TABLE parent_rows (id int, tok bigint);
SELECT fencing.protect('parent_rows', 'tok', scope => 'etcd-job');
CREATE TABLE child_rows () INHERITS (parent_rows);
-- marks far above the clock: an issued scope reset by hand, one near 2^63
SELECT fencing.fence_next_epoch('hand-set') IS NOT NULL AS issued;
SELECT fencing.reset_mark('hand-set', 5000000000) IS NOT NULL AS reset;
SELECT fencing.takeover('near-the-end', 9000000000000000000) IS NULL AS new_scope;
SELECT severity, "check", object,
       regexp_replace(detail, ' until .* but ', ' until (expiry) but ') AS detail, action
  FROM fencing.health
 WHERE "check" NOT IN ('fsync', 'full_page_writes', 'synchronous_commit',
                       'replicas without a synchronous standby', 'synchronous standby not connected');
-- settings: synchronous_commit off for new sessions, fsync and full_page_writes off
ALTER DATABASE fencing_health SET synchronous_commit = off;
\c fencing_health
SELECT severity, "check", object FROM fencing.health WHERE "check" = 'synchronous_commit';
ALTER DATABASE fencing_health RESET synchronous_commit;
-- (pg_regress starts its server with -F, so fsync is off already.)  A
-- backend applies a reload only between statements, after its SIGHUP
-- arrives; a new one forked after pg_reload_conf() starts with the new values.
ALTER SYSTEM SET fsync = off;
ALTER SYSTEM SET full_page_writes = off;
SELECT pg_reload_conf();
\c fencing_health
SELECT current_setting('fsync') AS fsync, current_setting('full_page_writes') AS full_page_writes;
SELECT severity, "check", object, action FROM fencing.health WHERE "check" IN ('fsync', 'full_page_writes');
ALTER SYSTEM RESET fsync;
ALTER SYSTEM RESET full_page_writes;
SELECT pg_reload_conf();
-- a scope owned by, and a grant to, a role that was dropped (role OIDs carry
-- no dependency): a later role with that OID would inherit them
CREATE ROLE regress_health_gone;
SELECT fencing.create_scope('orphaned', 'issued', 'regress_health_gone');
SELECT fencing.grant_scope('orphaned', 'write', 'regress_health_gone');
SELECT fencing.create_scope('granted-to-gone');
SELECT fencing.grant_scope('granted-to-gone', 'lead', 'regress_health_gone');
SELECT count(*) AS before_drop FROM fencing.health WHERE "check" LIKE '%dropped role';
DROP ROLE regress_health_gone;
SELECT severity, "check", object, regexp_replace(detail, 'OID [0-9]+', 'OID n') AS detail,
       regexp_replace(action, 'grantee = [0-9]+', 'grantee = n') AS action
  FROM fencing.health WHERE "check" LIKE '%dropped role'
 ORDER BY severity COLLATE "C", "check" COLLATE "C", object COLLATE "C";
-- the DBA repairs both: the findings go
SELECT fencing.alter_scope_owner('orphaned', current_user::regrole);
DELETE FROM fencing.scope_grants g
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.oid = g.grantee) AND g.grantee <> 0;
SELECT count(*) AS after_repair FROM fencing.health WHERE "check" LIKE '%dropped role';
-- readable by pg_monitor (not by PUBLIC, above)
SET ROLE regress_health_monitor;
SELECT count(*) > 0 AS monitor_reads FROM fencing.health;
RESET ROLE;

\c :regress_db
DROP DATABASE fencing_health;
DROP ROLE regress_health_worker;
DROP ROLE regress_health_monitor;
