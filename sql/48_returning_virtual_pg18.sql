-- 48_returning_virtual_pg18: the write paths of PostgreSQL 18 are fenced:
-- RETURNING old.* / new.* (UPDATE, DELETE, INSERT ... ON CONFLICT DO
-- UPDATE, MERGE) returns nothing for a refused write, and a table with
-- virtual generated columns is judged by its stored token column (a
-- virtual column can be neither the token nor the scope column: it is
-- computed after the fence has judged the row).  On older servers the
-- syntax does not exist: the test says so and stops
-- (48_returning_virtual_pg18_1.out).
\set SHOW_CONTEXT never
\set VERBOSITY terse
SELECT current_setting('server_version_num')::int >= 180000 AS pg18 \gset
\if :pg18
\else
\echo skipped: RETURNING old/new and virtual generated columns need PostgreSQL 18
\quit
\endif

-- tokens from the caller's lock service (no epoch is drawn: the epoch clock
-- is shared by the other tests); the old leader held 5, the new one holds 7
SELECT fencing.create_scope('r18', tokens => 'external');
\set old 5
\set new 7
CREATE TABLE r18 (k text PRIMARY KEY, v text, tok bigint,
                  shout text GENERATED ALWAYS AS (upper(v)) VIRTUAL,
                  tok_twice bigint GENERATED ALWAYS AS (tok * 2) VIRTUAL);
SELECT fencing.protect('r18', 'tok', scope => 'r18');
INSERT INTO r18 (k, v, tok) VALUES ('a', 'old', :old), ('b', 'old', :old), ('c', 'old', :old);
UPDATE r18 SET v = 'new', tok = :new WHERE k = 'a';

-- UPDATE ... RETURNING old, new
UPDATE r18 SET v = 'zombie', tok = :old WHERE k = 'b'
  RETURNING old.v AS old_v, new.v AS new_v;
\echo :LAST_ERROR_SQLSTATE
UPDATE r18 SET v = 'zombie' WHERE k = 'b' RETURNING old.v, new.v;
\echo :LAST_ERROR_SQLSTATE
UPDATE r18 SET v = 'current', tok = :new WHERE k = 'b'
  RETURNING old.v AS old_v, new.v AS new_v, new.shout,
            old.tok = :old AS old_tok_was_old, new.tok_twice = 2 * :new AS twice_is_new;

-- DELETE ... RETURNING old
BEGIN;
SELECT fencing.use_token('r18', :old) IS NOT NULL AS declared;
DELETE FROM r18 WHERE k = 'c' RETURNING old.k, new.k IS NULL AS no_new;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;

-- INSERT ... ON CONFLICT DO UPDATE ... RETURNING old, new
INSERT INTO r18 (k, v, tok) VALUES ('c', 'zombie upsert', :old)
  ON CONFLICT (k) DO UPDATE SET v = excluded.v, tok = excluded.tok
  RETURNING old.v AS old_v, new.v AS new_v;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO r18 (k, v, tok) VALUES ('c', 'upsert', :new), ('d', 'upsert', :new)
  ON CONFLICT (k) DO UPDATE SET v = excluded.v, tok = excluded.tok
  RETURNING k, old.v AS old_v, new.v AS new_v, new.shout;

-- MERGE ... RETURNING old, new
MERGE INTO r18 t USING (VALUES ('d', 'zombie merge')) s(k, v) ON t.k = s.k
  WHEN MATCHED THEN UPDATE SET v = s.v, tok = :old
  RETURNING merge_action(), old.v, new.v;
\echo :LAST_ERROR_SQLSTATE
MERGE INTO r18 t USING (VALUES ('d', 'merge')) s(k, v) ON t.k = s.k
  WHEN MATCHED THEN UPDATE SET v = s.v, tok = :new
  RETURNING merge_action(), old.v AS old_v, new.v AS new_v, new.shout;

SELECT k, v, shout, tok = :new AS tok_is_new, tok_twice = 2 * tok AS twice FROM r18 ORDER BY k COLLATE "C";
SELECT mark = :new AS mark_is_new FROM fencing.scopes WHERE scope = 'r18';

-- a virtual generated column is neither a token nor a scope column
CREATE TABLE r18_virtual (k text PRIMARY KEY, s text, t bigint,
                          vtok bigint GENERATED ALWAYS AS (t + 1) VIRTUAL,
                          vscope text GENERATED ALWAYS AS (s || '-x') VIRTUAL);
SELECT fencing.protect('r18_virtual', 'vtok', scope => 'r18');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.protect('r18_virtual', 't', scope_column => 'vscope');
\echo :LAST_ERROR_SQLSTATE

DROP TABLE r18_virtual;
SELECT fencing.unprotect('r18');
DROP TABLE r18;
