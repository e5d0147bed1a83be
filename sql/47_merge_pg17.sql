-- 47_merge_pg17: the write paths MERGE gained in PostgreSQL 17 are fenced
-- like every other: WHEN NOT MATCHED BY SOURCE THEN UPDATE / DELETE, MERGE
-- ... RETURNING with merge_action(), and MERGE into an updatable view.  A
-- stale token is refused in each (ZF001, nothing written), a missing one
-- too (ZF002), the current one writes.  On older servers the syntax does
-- not exist: the test says so and stops (47_merge_pg17_1.out).
\set SHOW_CONTEXT never
\set VERBOSITY terse
SELECT current_setting('server_version_num')::int >= 170000 AS pg17 \gset
\if :pg17
\else
\echo skipped: MERGE ... NOT MATCHED BY SOURCE, RETURNING, merge_action() and MERGE into a view need PostgreSQL 17
\quit
\endif

-- tokens from the caller's lock service (no epoch is drawn: the epoch clock
-- is shared by the other tests); the old leader held 5, the new one holds 7
SELECT fencing.create_scope('m17', tokens => 'external');
\set old 5
\set new 7
CREATE TABLE m17 (k text PRIMARY KEY, v text, tok bigint);
SELECT fencing.protect('m17', 'tok', scope => 'm17');
INSERT INTO m17 VALUES ('a', 'old', :old), ('b', 'old', :old), ('c', 'old', :old);
UPDATE m17 SET v = 'new', tok = :new WHERE k = 'a';

-- NOT MATCHED BY SOURCE THEN UPDATE: rows the source does not name
BEGIN;
SELECT fencing.use_token('m17', :old) IS NOT NULL AS declared;
MERGE INTO m17 t USING (VALUES ('a')) s(k) ON t.k = s.k
  WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 'zombie';
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- the token in the action itself, stale
MERGE INTO m17 t USING (VALUES ('a')) s(k) ON t.k = s.k
  WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 'zombie', tok = :old;
\echo :LAST_ERROR_SQLSTATE
-- no token at all: the row's own does not count
MERGE INTO m17 t USING (VALUES ('a')) s(k) ON t.k = s.k
  WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 'zombie';
\echo :LAST_ERROR_SQLSTATE
-- another action assigns the token: the action that ran did not
MERGE INTO m17 t USING (VALUES ('a')) s(k) ON t.k = s.k
  WHEN MATCHED THEN UPDATE SET tok = :new
  WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 'zombie';
\echo :LAST_ERROR_SQLSTATE
SELECT k, v, tok = :old AS tok_is_old FROM m17 ORDER BY k COLLATE "C";
-- the current leader
MERGE INTO m17 t USING (VALUES ('a')) s(k) ON t.k = s.k
  WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 'by source', tok = :new;
SELECT k, v, tok = :new AS tok_is_new FROM m17 ORDER BY k COLLATE "C";

-- NOT MATCHED BY SOURCE THEN DELETE
BEGIN;
SELECT fencing.use_token('m17', :old) IS NOT NULL AS declared;
MERGE INTO m17 t USING (VALUES ('a')) s(k) ON t.k = s.k
  WHEN NOT MATCHED BY SOURCE AND t.k = 'c' THEN DELETE;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
MERGE INTO m17 t USING (VALUES ('a')) s(k) ON t.k = s.k
  WHEN NOT MATCHED BY SOURCE AND t.k = 'c' THEN DELETE;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fencing.use_token('m17', :new) IS NOT NULL AS declared;
MERGE INTO m17 t USING (VALUES ('a')) s(k) ON t.k = s.k
  WHEN NOT MATCHED BY SOURCE AND t.k = 'c' THEN DELETE;
COMMIT;
SELECT k, v FROM m17 ORDER BY k COLLATE "C";

-- MERGE ... RETURNING merge_action(): a refused MERGE returns nothing
BEGIN;
SELECT fencing.use_token('m17', :old) IS NOT NULL AS declared;
MERGE INTO m17 t USING (VALUES ('b', 'ret'), ('d', 'ret')) s(k, v) ON t.k = s.k
  WHEN MATCHED THEN UPDATE SET v = s.v
  WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, s.v)
  RETURNING merge_action(), t.k, t.v;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT fencing.use_token('m17', :new) IS NOT NULL AS declared;
MERGE INTO m17 t USING (VALUES ('b', 'ret'), ('d', 'ret')) s(k, v) ON t.k = s.k
  WHEN MATCHED THEN UPDATE SET v = s.v
  WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, s.v)
  WHEN NOT MATCHED BY SOURCE AND t.k = 'a' THEN DELETE
  RETURNING merge_action(), t.k, t.v, t.tok = :new AS tok_is_new;
COMMIT;
-- in a writable CTE, stale
WITH w AS (MERGE INTO m17 t USING (VALUES ('b')) s(k) ON t.k = s.k
             WHEN MATCHED THEN UPDATE SET v = 'cte', tok = :old
             RETURNING merge_action() AS action, t.k)
SELECT * FROM w;
\echo :LAST_ERROR_SQLSTATE
SELECT k, v, tok = :new AS tok_is_new FROM m17 ORDER BY k COLLATE "C";

-- MERGE into an updatable view (token column renamed)
CREATE VIEW m17_view AS SELECT k, v, tok AS token FROM m17;
MERGE INTO m17_view t USING (VALUES ('b', 'view'), ('e', 'view')) s(k, v) ON t.k = s.k
  WHEN MATCHED THEN UPDATE SET v = s.v, token = :old
  WHEN NOT MATCHED THEN INSERT (k, v, token) VALUES (s.k, s.v, :old);
\echo :LAST_ERROR_SQLSTATE
MERGE INTO m17_view t USING (VALUES ('b', 'view')) s(k, v) ON t.k = s.k
  WHEN MATCHED THEN UPDATE SET v = s.v;
\echo :LAST_ERROR_SQLSTATE
MERGE INTO m17_view t USING (VALUES ('e', 'view')) s(k, v) ON t.k = s.k
  WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, s.v);
\echo :LAST_ERROR_SQLSTATE
MERGE INTO m17_view t USING (VALUES ('b')) s(k) ON t.k = s.k
  WHEN NOT MATCHED BY SOURCE THEN DELETE;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fencing.use_token('m17', :old) IS NOT NULL AS declared;
MERGE INTO m17_view t USING (VALUES ('b')) s(k) ON t.k = s.k
  WHEN MATCHED THEN DELETE;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
MERGE INTO m17_view t USING (VALUES ('b', 'view'), ('e', 'view')) s(k, v) ON t.k = s.k
  WHEN MATCHED THEN UPDATE SET v = s.v, token = :new
  WHEN NOT MATCHED THEN INSERT (k, v, token) VALUES (s.k, s.v, :new)
  RETURNING merge_action(), t.k, t.v;
SELECT k, v, tok = :new AS tok_is_new FROM m17 ORDER BY k COLLATE "C";
SELECT mark = :new AS mark_is_new FROM fencing.scopes WHERE scope = 'm17';

DROP VIEW m17_view;
SELECT fencing.unprotect('m17');
DROP TABLE m17;
