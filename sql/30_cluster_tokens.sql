-- 30_cluster_tokens: a token declared on another node of a Citus cluster.
-- There fencing.use_token() also sets fencing.declared_tokens with SET
-- LOCAL, which Citus repeats on the workers' connections
-- (test/stages/citus proves it); here the setting is set by hand, as a
-- worker receives it.  It declares only within the transaction that set
-- it, and yields to the backend's own declarations.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
CREATE DATABASE regress_fencing_cluster_tokens;
\c regress_fencing_cluster_tokens
SET client_min_messages = error;
CREATE EXTENSION fencing;
RESET client_min_messages;
CREATE TABLE jobs (id int PRIMARY KEY, v int, tok bigint);
SELECT fencing.protect('jobs', 'tok', scope => 's');
SELECT fencing.takeover('s', 5);
INSERT INTO jobs VALUES (1, 0, 5), (2, 0, 5);

-- for every scope, and for one scope (whose name may hold commas and colons)
BEGIN;
SET LOCAL fencing.declared_tokens = '5';
SELECT fencing.declared_token('s') AS declared, fencing.declared_token(NULL) AS for_all;
UPDATE jobs SET v = v + 1 WHERE id = 1;
COMMIT;
BEGIN;
SET LOCAL fencing.declared_tokens = '4,5:1:s,6:5:a,b:c';
SELECT fencing.declared_token('s') AS s, fencing.declared_token('a,b:c') AS odd,
       fencing.declared_token('other') AS other;
UPDATE jobs SET v = v + 1 WHERE id = 1;
COMMIT;
-- a stale one is refused like a declared one
BEGIN;
SET LOCAL fencing.declared_tokens = '4';
UPDATE jobs SET v = v + 1 WHERE id = 1;
ROLLBACK;
-- the backend's own declaration comes first
BEGIN;
SET LOCAL fencing.declared_tokens = '4';
SELECT fencing.use_token('s', 5);
UPDATE jobs SET v = v + 1 WHERE id = 1;
COMMIT;
-- a savepoint rolled back takes its SET back
BEGIN;
SET LOCAL fencing.declared_tokens = '5';
SAVEPOINT a;
SET LOCAL fencing.declared_tokens = '4';
ROLLBACK TO a;
UPDATE jobs SET v = v + 1 WHERE id = 2;
COMMIT;

-- a session-level SET (left behind on a pooled connection, say) declares
-- nothing in the transactions after the one that made it
SET fencing.declared_tokens = '5';
SELECT fencing.declared_token('s') AS declared;
UPDATE jobs SET v = v + 1 WHERE id = 1;
BEGIN;
SELECT fencing.declared_token('s') AS declared;
UPDATE jobs SET v = v + 1 WHERE id = 1;
ROLLBACK;
RESET fencing.declared_tokens;

-- nor does a session-level value restored by a savepoint's rollback
SET fencing.declared_tokens = '5';
BEGIN;
SAVEPOINT a;
SET LOCAL fencing.declared_tokens = '5';
ROLLBACK TO a;
SELECT fencing.declared_token('s') AS declared;
UPDATE jobs SET v = v + 1 WHERE id = 1;
ROLLBACK;
-- a RESET in the transaction takes its SET back
BEGIN;
SET LOCAL fencing.declared_tokens = '5';
RESET fencing.declared_tokens;
SELECT fencing.declared_token('s') AS declared;
ROLLBACK;
RESET fencing.declared_tokens;

-- nor does the value a function's SET clause hid, restored when it returns
CREATE FUNCTION sets_tokens() RETURNS bigint LANGUAGE sql
    SET fencing.declared_tokens = '1000000' AS $$ SELECT fencing.declared_token('s') $$;
SET fencing.declared_tokens = '5';
BEGIN;
SELECT sets_tokens() AS inside, fencing.declared_token('s') AS after;
UPDATE jobs SET v = v + 1 WHERE id = 1;
ROLLBACK;
RESET fencing.declared_tokens;
-- nor a RESET to a value from the role's or the database's settings
ALTER DATABASE regress_fencing_cluster_tokens SET fencing.declared_tokens = '7';
\c
SELECT fencing.declared_token('s') AS declared;  -- loads the library: '7' declares nothing
BEGIN;
SET LOCAL fencing.declared_tokens = '5';
SELECT fencing.declared_token('s') AS declared;
RESET fencing.declared_tokens;
SELECT current_setting('fencing.declared_tokens') AS setting, fencing.declared_token('s') AS declared;
ROLLBACK;
ALTER DATABASE regress_fencing_cluster_tokens RESET fencing.declared_tokens;

-- nor does a value set before this backend loaded the library (a
-- placeholder, maybe an earlier client's): a new session sets it first
\c
SET fencing.declared_tokens = '5';
BEGIN;
UPDATE jobs SET v = v + 1 WHERE id = 1;
ROLLBACK;
BEGIN;
SELECT fencing.declared_token('s') AS declared;
UPDATE jobs SET v = v + 1 WHERE id = 1;
ROLLBACK;
RESET fencing.declared_tokens;

-- malformed values are refused
SET fencing.declared_tokens = '5,';
SET fencing.declared_tokens = 'x';
SET fencing.declared_tokens = '5:0:';
SET fencing.declared_tokens = '5:9:s';
SET fencing.declared_tokens = '99999999999999999999';
SET fencing.declared_tokens = '-1';
SELECT id, v, tok FROM jobs ORDER BY id;

\c :regress_db
DROP DATABASE regress_fencing_cluster_tokens;
