-- 98_upgrade: the upgrade path from 1.0 keeps marks and terms and adds leases.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
CREATE DATABASE fencing_upgrade;
\c fencing_upgrade
CREATE EXTENSION fencing VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'fencing';
SELECT fencing.fence_next_epoch('kept') AS before_upgrade \gset
SELECT to_regclass('fencing.leases') IS NULL AS no_leases_in_1_0;
-- a table protected before 1.2 gets the triggers protect() gives it in 1.2
CREATE TABLE old_kv (k int PRIMARY KEY, tok bigint);
SELECT fencing.protect('old_kv', 'tok', scope => 'kept-external');
ALTER EXTENSION fencing UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'fencing';
SELECT mark = :before_upgrade AS mark_kept FROM fencing.scopes WHERE scope = 'kept';
SELECT granted, term > :before_upgrade AS new_term FROM fencing.acquire_lease('kept', 'after-upgrade', '1 minute');
SELECT tgname, tgtype, fencing.trigger_arguments(tgargs) AS args, tgqual IS NOT NULL AS has_when
  FROM pg_trigger WHERE tgrelid = 'old_kv'::regclass ORDER BY 1;
CREATE TABLE new_kv (k int PRIMARY KEY, tok bigint);
SELECT fencing.protect('new_kv', 'tok', scope => 'kept-external');
CREATE TEMP VIEW kv_triggers AS
SELECT tgrelid::regclass AS rel, tgname, tgtype, fencing.trigger_arguments(tgargs) AS args,
       replace(pg_get_triggerdef(oid), tgrelid::regclass::text, 'T') AS def
  FROM pg_trigger WHERE tgrelid IN ('old_kv'::regclass, 'new_kv'::regclass);
SELECT count(*) FILTER (WHERE rel = 'old_kv'::regclass) AS upgraded,
       count(*) FILTER (WHERE rel = 'new_kv'::regclass) AS fresh
  FROM kv_triggers;
-- in one and not the other (none)
(SELECT tgname, tgtype, args, def FROM kv_triggers WHERE rel = 'old_kv'::regclass
 EXCEPT SELECT tgname, tgtype, args, def FROM kv_triggers WHERE rel = 'new_kv'::regclass)
UNION ALL
(SELECT tgname, tgtype, args, def FROM kv_triggers WHERE rel = 'new_kv'::regclass
 EXCEPT SELECT tgname, tgtype, args, def FROM kv_triggers WHERE rel = 'old_kv'::regclass);
-- and an upgraded table's INSERT ... ON CONFLICT raises no mark for a row it does not write
-- (the first write creates the scope, with external tokens)
INSERT INTO old_kv VALUES (1, 5);
INSERT INTO old_kv VALUES (1, 105) ON CONFLICT DO NOTHING;
SELECT tokens, mark FROM fencing.scopes WHERE scope = 'kept-external';
-- the objects of an upgraded install are those of a fresh one
SELECT pg_describe_object(classid, objid, objsubid) COLLATE "C" AS member
  FROM pg_depend WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'fencing')
  ORDER BY 1;
SELECT unnest(extconfig)::regclass AS dumped FROM pg_extension WHERE extname = 'fencing' ORDER BY 1;
\c :regress_db
DROP DATABASE fencing_upgrade;

-- ---------------------------------------------------------------------------
-- 1.1 -> 1.2, scope security: existing scopes, marks, terms and
-- leases keep working; pre-1.2 scopes are owned by the extension's owner and
-- stay open to PUBLIC (with a NOTICE) until the DBA narrows them.
-- ---------------------------------------------------------------------------
CREATE DATABASE fencing_upgrade_12;
\c fencing_upgrade_12
\set SHOW_CONTEXT never
CREATE EXTENSION fencing VERSION '1.1';
CREATE ROLE regress_fencing_old_app;
CREATE TABLE old_rows (id int PRIMARY KEY, tok bigint);
SELECT fencing.protect('old_rows', 'tok', scope => 'old-clock');
GRANT SELECT, INSERT, UPDATE ON old_rows TO regress_fencing_old_app;
SELECT granted, term AS old_term FROM fencing.acquire_lease('old-clock', 'old-holder', '1 hour') \gset
INSERT INTO old_rows VALUES (1, :old_term);
SELECT fencing.reset_mark('old-external', 500);
ALTER EXTENSION fencing UPDATE TO '1.2';
SELECT extversion FROM pg_extension WHERE extname = 'fencing';
SELECT scope, owner::regrole = (SELECT extowner FROM pg_extension WHERE extname = 'fencing')::regrole AS owned_by_ext_owner,
       tokens, mark = CASE scope WHEN 'old-clock' THEN :old_term ELSE 500 END AS mark_kept
  FROM fencing.scopes ORDER BY scope COLLATE "C";
SELECT scope, grantee, privilege FROM fencing.scope_grants ORDER BY scope COLLATE "C", privilege COLLATE "C";
SELECT holder, term = :old_term AS lease_term_kept, live FROM fencing.lease_status;
SELECT count(*) AS terms_kept FROM fencing.terms WHERE scope = 'old-clock' AND epoch = :old_term;
-- an application of 1.1 keeps working: PUBLIC may still lead, write and read
SET ROLE regress_fencing_old_app;
SELECT renewed FROM fencing.renew_lease('old-clock', 'old-holder', :old_term, '1 hour');
UPDATE old_rows SET tok = :old_term WHERE id = 1;
SELECT fencing.fence_next_epoch('old-clock') > :old_term AS app_still_leads;
SELECT count(*) AS app_reads FROM fencing.scopes;
RESET ROLE;
-- until the DBA revokes PUBLIC
SELECT fencing.revoke_scope('old-clock', p, 'public') FROM unnest(ARRAY['lead', 'write', 'read']) AS p;
SET ROLE regress_fencing_old_app;
SELECT fencing.fence_next_epoch('old-clock');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS app_reads FROM fencing.scopes WHERE scope = 'old-clock';
RESET ROLE;
-- the objects and configuration tables of an upgraded install are those of a fresh one
SELECT pg_describe_object(classid, objid, objsubid) COLLATE "C" AS member
  FROM pg_depend WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'fencing')
  ORDER BY 1;
\c :regress_db
DROP DATABASE fencing_upgrade_12;
DROP ROLE regress_fencing_old_app;

-- ---------------------------------------------------------------------------
-- 1.2 -> 1.3, lease calls in C: a 1.2 install keeps working on the 1.3
-- library before its update (its plpgsql lease functions call C helpers the
-- library keeps), and the leases it granted carry on after the update, for
-- the role that holds them.
-- ---------------------------------------------------------------------------
CREATE DATABASE fencing_upgrade_13;
\c fencing_upgrade_13
\set SHOW_CONTEXT never
SET client_min_messages = warning;
CREATE EXTENSION fencing VERSION '1.2';
RESET client_min_messages;
CREATE ROLE regress_fencing_lease_app;
GRANT EXECUTE ON FUNCTION fencing.create_scope(text, text, regrole) TO regress_fencing_lease_app;
SET ROLE regress_fencing_lease_app;
SELECT granted, term AS held_term FROM fencing.acquire_lease('carried', 'h1', '1 hour') \gset
SELECT granted, lease_holder FROM fencing.acquire_lease('carried', 'h2', '1 hour');
SELECT renewed FROM fencing.renew_lease('carried', 'h1', :held_term, '1 hour');
SELECT granted, term AS short_term FROM fencing.acquire_lease('expiring', 'h1', '1 millisecond') \gset
RESET ROLE;
ALTER EXTENSION fencing UPDATE TO '1.3';
SELECT extversion FROM pg_extension WHERE extname = 'fencing';
SELECT p.oid::regprocedure AS lease_function, l.lanname, p.prosecdef, p.proconfig
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.pronamespace = 'fencing'::regnamespace AND p.proname LIKE '%\_lease'
 ORDER BY p.oid::regprocedure::text COLLATE "C";
SET ROLE regress_fencing_lease_app;
-- the holder asks again: the same term; another holder is told who holds it
SELECT granted, term = :held_term AS same_term FROM fencing.acquire_lease('carried', 'h1', '1 hour');
SELECT granted, lease_holder, term = :held_term AS held_term FROM fencing.acquire_lease('carried', 'h2', '1 hour');
SELECT renewed, lease_term = :held_term AS held_term FROM fencing.renew_lease('carried', 'h1', :held_term, '1 hour');
-- the lease granted for a millisecond before the update has expired
SELECT pg_sleep(0.01);
SELECT granted, term > :short_term AS newer_term FROM fencing.acquire_lease('expiring', 'h2', '1 hour');
SELECT renewed, lease_holder FROM fencing.renew_lease('expiring', 'h1', :short_term, '1 hour');
SELECT fencing.release_lease('carried', 'h1', :held_term) AS released;
RESET ROLE;
SELECT scope, holder, live, takeovers, fenced FROM fencing.lease_status ORDER BY scope COLLATE "C";
SELECT scope, count(*) AS terms FROM fencing.terms GROUP BY scope ORDER BY scope COLLATE "C";
\c :regress_db
DROP DATABASE fencing_upgrade_13;
DROP ROLE regress_fencing_lease_app;

-- ---------------------------------------------------------------------------
-- 1.3 -> 1.4: PUBLIC no longer executes fencing.fence_trigger(); the owner
-- of a partitioned table protected on 1.3 keeps adding partitions (Postgres
-- clones the row trigger with the creator's rights), a stranger gets none.
-- ---------------------------------------------------------------------------
CREATE DATABASE fencing_upgrade_14;
\c fencing_upgrade_14
\set SHOW_CONTEXT never
SET client_min_messages = warning;
CREATE EXTENSION fencing VERSION '1.3';
RESET client_min_messages;
CREATE ROLE regress_fencing_parted_owner;
CREATE ROLE regress_fencing_stranger14;
GRANT CREATE ON SCHEMA public TO regress_fencing_parted_owner, regress_fencing_stranger14;
SET ROLE regress_fencing_parted_owner;
CREATE TABLE parted13 (id int, tok bigint) PARTITION BY RANGE (id);
SELECT fencing.protect('parted13', 'tok');
RESET ROLE;
-- as the 1.3 library left it: no grant of its own (the 1.4 library's protect() made one)
REVOKE EXECUTE ON FUNCTION fencing.fence_trigger() FROM regress_fencing_parted_owner;
ALTER EXTENSION fencing UPDATE TO '1.4';
SET ROLE regress_fencing_parted_owner;
CREATE TABLE parted13_1 PARTITION OF parted13 FOR VALUES FROM (0) TO (10);
SELECT tgname FROM pg_trigger WHERE tgrelid = 'parted13_1'::regclass ORDER BY 1;
SET ROLE regress_fencing_stranger14;
CREATE TABLE own14 (id int, tok bigint);
\set VERBOSITY sqlstate
CREATE TRIGGER by_hand BEFORE INSERT ON own14 FOR EACH ROW
    EXECUTE FUNCTION fencing.fence_trigger('tok', 'error', 'row');
\set VERBOSITY default
RESET ROLE;
\c :regress_db
DROP DATABASE fencing_upgrade_14;
DROP ROLE regress_fencing_parted_owner;
DROP ROLE regress_fencing_stranger14;
