-- 50_security: the extension's state is out of reach of ordinary roles, the
-- bypass is privileged and explicit, declarations end with their transaction
-- (and savepoint), and a hostile search_path changes nothing.
\set SHOW_CONTEXT never

CREATE ROLE fencing_app LOGIN;
CREATE TABLE ledger (id int PRIMARY KEY, amount int, tok bigint);
SELECT fencing.protect('ledger', 'tok', scope => 'ledger');
GRANT SELECT, INSERT, UPDATE, DELETE ON ledger TO fencing_app;
SELECT fencing.fence_next_epoch('ledger') AS t1 \gset
-- 1.2: the owner grants the application the scope; its tokens are external
SELECT fencing.grant_scope('ledger', 'lead', 'fencing_app'), fencing.grant_scope('ledger', 'write', 'fencing_app');
SELECT fencing.alter_scope_tokens('ledger', 'external');

SET ROLE fencing_app;
-- the application writes through the fence ...
INSERT INTO ledger VALUES (1, 10, :t1);
SELECT fencing.fence_next_epoch('ledger') AS t2 \gset
UPDATE ledger SET amount = 20, tok = :t2 WHERE id = 1;
-- ... can read the marks, but cannot write them or the clock
SELECT scope, mark = :t2 AS mark_is_t2 FROM fencing.scopes WHERE scope = 'ledger';
UPDATE fencing.scopes SET mark = 0 WHERE scope = 'ledger';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM fencing.scopes;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO fencing.terms VALUES (1, 'ledger', 'me', now(), 'me');
\echo :LAST_ERROR_SQLSTATE
SELECT setval('fencing.epoch_seq', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.reset_mark('ledger', 0);
\echo :LAST_ERROR_SQLSTATE
-- and cannot switch the fence off
SET fencing.bypass = on;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- the bypass: superuser only, explicit, for one transaction, and it raises no mark
BEGIN;
SET LOCAL fencing.bypass = on;
UPDATE ledger SET amount = 0 WHERE id = 1;
COMMIT;
SELECT amount, tok = :t2 AS tok_unchanged FROM ledger;
SELECT mark = :t2 AS mark_unchanged FROM fencing.scopes WHERE scope = 'ledger';

-- declarations vanish at commit, at abort and with a rolled-back savepoint
BEGIN;
SELECT fencing.use_token('ledger', :t2);
SAVEPOINT s1;
SELECT fencing.use_token('ledger', :t1);
SELECT fencing.use_token(:t1);
SELECT fencing.declared_token('ledger') = :t1 AS inner_declared;
ROLLBACK TO SAVEPOINT s1;
SELECT fencing.declared_token('ledger') = :t2 AS outer_kept,
       fencing.declared_token(NULL) IS NULL AS all_scopes_gone;
UPDATE ledger SET amount = 30 WHERE id = 1;
ROLLBACK;
SELECT fencing.declared_token('ledger') IS NULL AS gone_after_abort;

-- a mark raised inside a rolled-back savepoint is rolled back with it
BEGIN;
SAVEPOINT s2;
UPDATE ledger SET amount = 40, tok = :t2 + 100 WHERE id = 1;
SELECT mark = :t2 + 100 AS raised_inside FROM fencing.scopes WHERE scope = 'ledger';
ROLLBACK TO SAVEPOINT s2;
SELECT mark = :t2 AS back_to_t2 FROM fencing.scopes WHERE scope = 'ledger';
UPDATE ledger SET amount = 50, tok = :t2 WHERE id = 1;
COMMIT;
SELECT amount, tok = :t2 AS tok_is_t2 FROM ledger;

-- a hostile public schema: fake greatest(), fake >= and < operators, fake
-- now(), and tables shadowing ours; the fence is unaffected
CREATE FUNCTION public.greatest(bigint, bigint) RETURNS bigint
  LANGUAGE sql AS 'SELECT 0::bigint';
CREATE FUNCTION public.always_true(bigint, bigint) RETURNS boolean
  LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR public.>= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.always_true);
CREATE OPERATOR public.< (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.always_true);
CREATE FUNCTION public.plus_nothing(bigint, integer) RETURNS bigint
  LANGUAGE sql AS 'SELECT $1';
CREATE OPERATOR public.+ (LEFTARG = bigint, RIGHTARG = integer, FUNCTION = public.plus_nothing);
CREATE FUNCTION public.now() RETURNS timestamptz LANGUAGE sql AS $$SELECT 'epoch'::timestamptz$$;
CREATE TABLE public.scopes (scope text, mark bigint);
CREATE TABLE public.terms (epoch bigint);
SET search_path = public, pg_catalog;
SELECT fencing.fence_next_epoch('ledger') AS t3 \gset
SELECT :t3 > :t2 AS still_increasing;
SELECT terms_issued AS counted, mark = :t3 AS mark_is_t3,
       mark_raised_at > 'epoch'::timestamptz AS real_clock
  FROM fencing.scopes WHERE scope = 'ledger';
UPDATE ledger SET amount = 60, tok = :t2 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE ledger SET amount = 60, tok = :t3 + 1 WHERE id = 1;
SELECT mark = :t3 + 1 AS raised_by_write FROM fencing.scopes WHERE scope = 'ledger';
SELECT count(*) AS shadow_rows FROM public.scopes;
RESET search_path;
DROP TABLE public.scopes, public.terms;
DROP OPERATOR public.>= (bigint, bigint);
DROP OPERATOR public.< (bigint, bigint);
DROP OPERATOR public.+ (bigint, integer);
DROP FUNCTION public.greatest(bigint, bigint), public.always_true(bigint, bigint),
  public.plus_nothing(bigint, integer), public.now();

-- Reading fencing.protected_tables (also through fencing.health and
-- fencing.table_stats) locks no table: it read each partition tree with
-- pg_partition_tree(), which takes AccessShareLock on every partition, so
-- any role held locks on every protected partition of the database (another
-- tenant's TRUNCATE waited for its open transaction), and a tenant holding
-- its own partition's lock stalled every reader of the views, the monitoring
-- included.
CREATE SCHEMA tenant;
CREATE TABLE tenant.parted (id int, tok bigint) PARTITION BY RANGE (id);
CREATE TABLE tenant.parted_1 PARTITION OF tenant.parted FOR VALUES FROM (0) TO (10)
  PARTITION BY RANGE (id);
CREATE TABLE tenant.parted_1_1 PARTITION OF tenant.parted_1 FOR VALUES FROM (0) TO (5);
SELECT fencing.protect('tenant.parted', 'tok');
-- (fencing_app may not even look the schema up: its tables by OID)
SELECT 'tenant.parted'::regclass::oid AS root, 'tenant.parted_1'::regclass::oid AS mid,
       'tenant.parted_1_1'::regclass::oid AS leaf \gset
SET ROLE fencing_app;
BEGIN;
SELECT enabled, problem FROM fencing.protected_tables WHERE relation = :root;
SELECT count(*) AS tenant_tables_locked FROM pg_catalog.pg_locks
 WHERE pid = pg_catalog.pg_backend_pid() AND locktype = 'relation'
   AND relation IN (:root, :mid, :leaf);
ROLLBACK;
RESET ROLE;
-- what it reads is the same: a partition two levels down without its fence
ALTER TABLE tenant.parted_1_1 DISABLE TRIGGER zz_fence_truncate;
SELECT relation, enabled, problem FROM fencing.protected_tables
 WHERE relation = 'tenant.parted'::regclass;
ALTER TABLE tenant.parted_1_1 ENABLE ALWAYS TRIGGER zz_fence_truncate;
DROP SCHEMA tenant CASCADE;

DROP TABLE ledger;
DROP ROLE fencing_app;
