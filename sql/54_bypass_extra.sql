-- 54_bypass_extra: fencing.bypass keeps, for each value, the transaction
-- that set it in memory the server itself frees (guc_malloc from 16 on): a
-- SET LOCAL that ends with COMMIT or ROLLBACK, a SET undone by RESET, a
-- function's SET clause and a savepoint rolled back all give the value back
-- without the server complaining ("pfree called with invalid pointer",
-- then a PANIC at commit, on 16+ when the extra came from malloc).
\set SHOW_CONTEXT never
\set VERBOSITY terse
CREATE TABLE bx_rows (id int PRIMARY KEY, tok bigint);
SELECT fencing.protect('bx_rows', 'tok', scope => 'bx');
BEGIN;
SET LOCAL fencing.bypass = on;
INSERT INTO bx_rows VALUES (1, NULL);
COMMIT;
BEGIN;
SET LOCAL fencing.bypass = on;
INSERT INTO bx_rows VALUES (2, NULL);
ROLLBACK;
BEGIN;
SET fencing.bypass = on;
INSERT INTO bx_rows VALUES (3, NULL);
RESET fencing.bypass;
INSERT INTO bx_rows VALUES (4, NULL);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SET LOCAL fencing.bypass = on;
SAVEPOINT s;
SET LOCAL fencing.bypass = off;
ROLLBACK TO SAVEPOINT s;
INSERT INTO bx_rows VALUES (5, NULL);
RELEASE SAVEPOINT s;
COMMIT;
CREATE FUNCTION bx_insert(i int) RETURNS void LANGUAGE sql
  SET fencing.bypass = on
  BEGIN ATOMIC INSERT INTO bx_rows VALUES (i, NULL); END;
BEGIN;
SELECT bx_insert(6);
COMMIT;
-- a session-level SET (its own transaction, in autocommit) acts in no later one
SET fencing.bypass = on;
INSERT INTO bx_rows VALUES (7, NULL);
INSERT INTO bx_rows VALUES (8, NULL);
\echo :LAST_ERROR_SQLSTATE
RESET fencing.bypass;
SELECT id FROM bx_rows ORDER BY id;
SELECT fencing.unprotect('bx_rows');
DROP FUNCTION bx_insert(int);
DROP TABLE bx_rows;
