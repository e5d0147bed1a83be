-- 44_subtransactions: the fence's per-transaction state follows
-- subtransactions exactly.  A subtransaction's abort (ROLLBACK TO
-- SAVEPOINT, an exception block, a trigger catching an error) takes back
-- the scope locks it took, their count and the marks it changed, and
-- nothing of its parent's: the parent's locks still count towards the
-- bound of fine locks (at most 32, then the table lock), and a raise the
-- parent deferred to its AFTER INSERT trigger still happens.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
SET client_min_messages = warning;
CREATE DATABASE fencing_subxact;
\c fencing_subxact
SET client_min_messages = warning;
CREATE EXTENSION fencing;
RESET client_min_messages;

-- the scope locks this session holds, one by one
CREATE FUNCTION fine_scope_locks() RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM pg_locks
     WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = -511
$$;

-- 1. A bulk load whose rows each run a failing subtransaction keeps the
-- bound: 1.3 reset the count at every abort and took a lock per scope.
CREATE TABLE tenants (id int PRIMARY KEY, tenant text NOT NULL, tok bigint);
SELECT fencing.protect('tenants', 'tok', scope_column => 'tenant');
INSERT INTO tenants SELECT i, 'tenant-' || i, 1 FROM generate_series(1, 100) i;
SELECT count(*) AS scopes, min(mark), max(mark) FROM fencing.scopes WHERE scope LIKE 'tenant-%';
BEGIN;
DO $$
BEGIN
    FOR i IN 1 .. 100 LOOP
        UPDATE tenants SET tok = 1 WHERE id = i;
        BEGIN
            PERFORM 1 / 0;      -- a failing step of each row's work
        EXCEPTION WHEN division_by_zero THEN NULL;
        END;
    END LOOP;
END
$$;
SELECT fine_scope_locks() <= 32 AS bounded, fine_scope_locks() > 0 AS some_fine;
SELECT mode FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = -508 ORDER BY mode COLLATE "C";
COMMIT;
-- the same with ROLLBACK TO SAVEPOINT between the rows
BEGIN;
SELECT fencing.use_token(1);
SAVEPOINT s;
UPDATE tenants SET tok = 1 WHERE id BETWEEN 1 AND 20;
SAVEPOINT t;
SELECT 1 / 0;
ROLLBACK TO SAVEPOINT t;
UPDATE tenants SET tok = 1 WHERE id BETWEEN 21 AND 40;
SAVEPOINT u;
SELECT 1 / 0;
ROLLBACK TO SAVEPOINT u;
UPDATE tenants SET tok = 1 WHERE id BETWEEN 41 AND 100;
SELECT fine_scope_locks() AS fine_locks;
-- a savepoint that took locks gives back exactly its own
ROLLBACK TO SAVEPOINT s;
SELECT fine_scope_locks() AS fine_locks_after_rollback;
UPDATE tenants SET tok = 1 WHERE id BETWEEN 1 AND 40;
SELECT fine_scope_locks() AS fine_locks_again;
COMMIT;

-- 2. An upsert's raise, deferred to the AFTER INSERT trigger, survives a
-- subtransaction that aborts in between (an audit trigger catching a
-- duplicate): 1.3 lost it, the row committed with token 9 and the mark
-- stayed 5.
CREATE TABLE jobs (id int PRIMARY KEY, payload text, tok bigint);
SELECT fencing.protect('jobs', 'tok', scope => 'jobs-ext');
INSERT INTO jobs VALUES (1, 'leader 5', 5);
CREATE TABLE audit (id int PRIMARY KEY);
INSERT INTO audit VALUES (2);
CREATE FUNCTION audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        INSERT INTO audit VALUES (NEW.id);
    EXCEPTION WHEN unique_violation THEN
        NULL;               -- audited already
    END;
    RETURN NULL;
END
$$;
-- fires after the row is written, before zz_fence_inserted (name order)
CREATE TRIGGER aa_audit AFTER INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION audit_row();
INSERT INTO jobs VALUES (2, 'leader 9', 9) ON CONFLICT (id) DO UPDATE SET payload = excluded.payload, tok = excluded.tok;
SELECT mark FROM fencing.scopes WHERE scope = 'jobs-ext';
SELECT id, payload, tok FROM jobs ORDER BY id;
-- the old leader, holding 5, is fenced
UPDATE jobs SET payload = 'zombie', tok = 5 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO jobs VALUES (3, 'zombie', 5) ON CONFLICT (id) DO NOTHING;
\echo :LAST_ERROR_SQLSTATE
-- the same inside an explicit transaction, with a savepoint around the upsert
BEGIN;
SAVEPOINT before_upsert;
INSERT INTO jobs VALUES (4, 'leader 11', 11) ON CONFLICT (id) DO UPDATE SET tok = excluded.tok;
RELEASE SAVEPOINT before_upsert;
INSERT INTO audit VALUES (5);
INSERT INTO jobs VALUES (5, 'leader 11', 11) ON CONFLICT (id) DO NOTHING;
COMMIT;
SELECT mark FROM fencing.scopes WHERE scope = 'jobs-ext';

-- 3. A raise rolled back with its savepoint: the parent's mark counts again,
-- the parent's own raise included.
BEGIN;
SELECT fencing.use_token('jobs-ext', 11);
UPDATE jobs SET payload = 'at 11' WHERE id = 1;
SAVEPOINT raise;
SELECT fencing.use_token('jobs-ext', 20);
UPDATE jobs SET payload = 'at 20' WHERE id = 1;
SELECT mark FROM fencing.scopes WHERE scope = 'jobs-ext';
ROLLBACK TO SAVEPOINT raise;
SELECT mark FROM fencing.scopes WHERE scope = 'jobs-ext';
-- the raise to 20 never happened, and neither did its declaration: 11
-- writes again
SELECT fencing.declared_token('jobs-ext');
UPDATE jobs SET payload = 'at 11 again', tok = 11 WHERE id = 1;
COMMIT;
BEGIN;
-- the parent raises to 13; a savepoint raises to 15 and rolls back
UPDATE jobs SET payload = 'at 13', tok = 13 WHERE id = 2;
SAVEPOINT raise2;
UPDATE jobs SET payload = 'at 15', tok = 15 WHERE id = 2;
ROLLBACK TO SAVEPOINT raise2;
-- 12 is below the parent's raise to 13: stale; 14 raises (15 never happened)
SAVEPOINT stale;
UPDATE jobs SET payload = 'at 12', tok = 12 WHERE id = 2;
ROLLBACK TO SAVEPOINT stale;
UPDATE jobs SET payload = 'at 14', tok = 14 WHERE id = 2;
COMMIT;
SELECT mark FROM fencing.scopes WHERE scope = 'jobs-ext';
SELECT id, payload, tok FROM jobs ORDER BY id;

\c :regress_db
DROP DATABASE fencing_subxact;
