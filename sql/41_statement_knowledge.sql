-- 41_statement_knowledge: the fence judges a write by the statement that
-- fired it, found exactly (the ResultRelInfo holding the trigger, the MERGE
-- action running), never by column names or plan shapes; a statement that
-- began before the library was loaded (a session's first, without
-- shared_preload_libraries) is judged without it or refused with 55000.
-- "seen": after LOAD 'fencing' in the session (as with preloading);
-- "unseen": the first statement of a new session (\c).
\set SHOW_CONTEXT never
\set VERBOSITY terse
SELECT current_database() AS regress_db \gset
SELECT fencing.create_scope('sk', tokens => 'external');
-- one table per kind: fixed scope (error, skip, declared), scope column, none
CREATE TABLE sk_rows (id int PRIMARY KEY, v text, tok bigint);
SELECT fencing.protect('sk_rows', 'tok', scope => 'sk');
CREATE TABLE sk_skip (id int PRIMARY KEY, v text, tok bigint);
SELECT fencing.protect('sk_skip', 'tok', scope => 'sk', on_stale => 'skip');
CREATE TABLE sk_decl (id int PRIMARY KEY, v text, tok bigint);
SELECT fencing.protect('sk_decl', 'tok', scope => 'sk', tokens => 'declared');
CREATE TABLE sk_col (id int PRIMARY KEY, s text, v text, tok bigint);
SELECT fencing.protect('sk_col', 'tok', scope_column => 's');
CREATE TABLE sk_none (id int PRIMARY KEY, v text, tok bigint);
SELECT fencing.protect('sk_none', 'tok');
CREATE TABLE sk_part (id int, part int, v text, tok bigint, PRIMARY KEY (id, part)) PARTITION BY LIST (part);
CREATE TABLE sk_part1 PARTITION OF sk_part FOR VALUES IN (1);
CREATE TABLE sk_part2 PARTITION OF sk_part FOR VALUES IN (2);
SELECT fencing.protect('sk_part', 'tok', scope => 'sk');
-- an unfenced table MERGEd into by a writable CTE (PG 17+)
CREATE TABLE sk_other (id int PRIMARY KEY, tok bigint);
INSERT INTO sk_other VALUES (1, 0);
-- the leader holds 5
INSERT INTO sk_rows VALUES (1, 'leader', 5), (2, 'leader', 5);
INSERT INTO sk_skip VALUES (1, 'leader', 5);
BEGIN;
SELECT fencing.use_token('sk', 5);
INSERT INTO sk_decl VALUES (1, 'leader', NULL);
COMMIT;
INSERT INTO sk_col VALUES (1, 'sk', 'leader', 5);
INSERT INTO sk_none VALUES (1, 'leader', 5);
INSERT INTO sk_part VALUES (1, 1, 'leader', 5);
SELECT mark FROM fencing.scopes WHERE scope = 'sk';
-- a function that MERGEs tokenlessly, the action that runs not assigning tok
CREATE FUNCTION sk_merge(tab regclass) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('MERGE INTO %s t USING (VALUES (1)) s(id) ON t.id = s.id
                    WHEN MATCHED AND false THEN UPDATE SET tok = 99
                    WHEN MATCHED THEN UPDATE SET v = ''zombie''', tab);
  RETURN true;
END $$;

-- 1. tokenless MERGE, two UPDATE actions, only the one not running assigns tok
LOAD 'fencing';
SELECT sk_merge('sk_rows');
\echo :LAST_ERROR_SQLSTATE
SELECT sk_merge('sk_skip');
\echo :LAST_ERROR_SQLSTATE
SELECT sk_merge('sk_decl');
\echo :LAST_ERROR_SQLSTATE
SELECT sk_merge('sk_col');
\echo :LAST_ERROR_SQLSTATE
SELECT sk_merge('sk_none');
\echo :LAST_ERROR_SQLSTATE
SELECT sk_merge('sk_part');
\echo :LAST_ERROR_SQLSTATE
-- the running action assigns tok: the leader's own token is taken
MERGE INTO sk_rows t USING (VALUES (1)) s(id) ON t.id = s.id
  WHEN MATCHED AND s.id = 1 THEN UPDATE SET tok = 5, v = 'leader merge'
  WHEN MATCHED THEN UPDATE SET v = 'zombie';
-- an earlier action's condition held for an earlier row, not for this one
MERGE INTO sk_rows t USING (VALUES (1), (2)) s(id) ON t.id = s.id
  WHEN MATCHED AND s.id = 1 THEN UPDATE SET tok = 5, v = 'leader merge'
  WHEN MATCHED THEN UPDATE SET v = 'zombie';
\echo :LAST_ERROR_SQLSTATE
-- unseen: the first statement of a session, top level or nested
\c :regress_db
MERGE INTO sk_rows t USING (VALUES (1)) s(id) ON t.id = s.id
  WHEN MATCHED AND false THEN UPDATE SET tok = 99
  WHEN MATCHED THEN UPDATE SET v = 'zombie';
\echo :LAST_ERROR_SQLSTATE
\c :regress_db
DO $$ BEGIN PERFORM sk_merge('sk_rows'); END $$;
\echo :LAST_ERROR_SQLSTATE
\c :regress_db
CREATE PROCEDURE sk_merge_proc() LANGUAGE plpgsql AS $$ BEGIN PERFORM sk_merge('sk_rows'); END $$;
\c :regress_db
CALL sk_merge_proc();
\echo :LAST_ERROR_SQLSTATE
\c :regress_db
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
MERGE INTO sk_rows t USING (VALUES (1)) s(id) ON t.id = s.id
  WHEN MATCHED AND false THEN UPDATE SET tok = 99
  WHEN MATCHED THEN UPDATE SET v = 'zombie';
\echo :LAST_ERROR_SQLSTATE
\c :regress_db
UPDATE sk_rows SET v = 'outer' WHERE id = 2 AND sk_merge('sk_rows');
\echo :LAST_ERROR_SQLSTATE
\c :regress_db
SELECT sk_merge('sk_skip');
\echo :LAST_ERROR_SQLSTATE
-- declared tokens: the column decides nothing, judged without the statement
\c :regress_db
SELECT sk_merge('sk_decl');
\echo :LAST_ERROR_SQLSTATE
\c :regress_db
SELECT sk_merge('sk_col');
\echo :LAST_ERROR_SQLSTATE
\c :regress_db
SELECT sk_merge('sk_none');
\echo :LAST_ERROR_SQLSTATE
-- unseen, but the session's top-level statement with one ModifyTable node: known
\c :regress_db
UPDATE sk_rows SET tok = 5, v = 'first statement' WHERE id = 2;
\c :regress_db
PREPARE sk_upd AS UPDATE sk_rows SET tok = 5, v = 'prepared' WHERE id = 2;
EXECUTE sk_upd;
\c :regress_db
UPDATE sk_rows SET v = 'first statement, tokenless' WHERE id = 2;
\echo :LAST_ERROR_SQLSTATE
-- ... a MERGE whose UPDATE actions all assign tok, or none does, too
\c :regress_db
MERGE INTO sk_rows t USING (VALUES (1)) s(id) ON t.id = s.id
  WHEN MATCHED AND s.id = 2 THEN UPDATE SET tok = 5, v = 'other'
  WHEN MATCHED THEN UPDATE SET tok = 5, v = 'leader merge';
\c :regress_db
MERGE INTO sk_rows t USING (VALUES (1)) s(id) ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET v = 'zombie';
\echo :LAST_ERROR_SQLSTATE
-- ... but not one whose running action is not known (above)
-- unseen, a changed token was assigned (whatever the statement)
\c :regress_db
BEGIN;
MERGE INTO sk_rows t USING (VALUES (1)) s(id) ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET tok = 6, v = 'new leader';
SELECT mark FROM fencing.scopes WHERE scope = 'sk';
ROLLBACK;
SELECT id, v, tok FROM sk_rows ORDER BY id;

-- 2. the statement's other DML do not decide for this one
-- a writable CTE writing the same table twice
LOAD 'fencing';
WITH a AS (UPDATE sk_rows SET tok = 5, v = 'cte a' WHERE id = 1 RETURNING 1)
UPDATE sk_rows SET v = 'cte b' WHERE id = 2;
\echo :LAST_ERROR_SQLSTATE
WITH a AS (UPDATE sk_rows SET v = 'cte a' WHERE id = 1 RETURNING 1)
UPDATE sk_rows SET tok = 5, v = 'cte b' WHERE id = 2;
\echo :LAST_ERROR_SQLSTATE
WITH a AS (UPDATE sk_rows SET tok = 5, v = 'cte a' WHERE id = 1 RETURNING 1)
UPDATE sk_rows SET tok = 5, v = 'cte b' WHERE id = 2;
-- a writable CTE with an upsert: the main INSERT is no upsert (its raise is not deferred)
BEGIN;
WITH a AS (INSERT INTO sk_rows VALUES (1, 'dn', 7) ON CONFLICT DO NOTHING RETURNING 1)
INSERT INTO sk_rows VALUES (3, 'main', 7);
SELECT mark FROM fencing.scopes WHERE scope = 'sk';
ROLLBACK;
-- an updatable view renaming the token column
CREATE VIEW sk_view AS SELECT id, v, tok AS token FROM sk_rows;
UPDATE sk_view SET v = 'view' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE sk_view SET v = 'view', token = 5 WHERE id = 1;
-- MERGE into a view and MERGE in WITH need PG 17 (41_statement_knowledge_1.out)
SELECT current_setting('server_version_num')::int >= 170000 AS pg17 \gset
\if :pg17
MERGE INTO sk_view t USING (VALUES (1)) s(id) ON t.id = s.id
  WHEN MATCHED AND false THEN UPDATE SET token = 99
  WHEN MATCHED THEN UPDATE SET v = 'zombie';
\echo :LAST_ERROR_SQLSTATE
WITH x AS (MERGE INTO sk_other o USING (VALUES (1)) s(id) ON o.id = s.id
             WHEN MATCHED AND false THEN UPDATE SET tok = 1
             WHEN MATCHED THEN UPDATE SET tok = 2)
UPDATE sk_rows SET tok = 5, v = 'cte merge' WHERE id = 1;
SELECT v, tok FROM sk_rows WHERE id = 1;
\endif

-- 3. INSERT ... ON CONFLICT DO NOTHING that writes no row raises no mark
LOAD 'fencing';
INSERT INTO sk_rows VALUES (1, 'dn', 9) ON CONFLICT DO NOTHING;
SELECT mark FROM fencing.scopes WHERE scope = 'sk';
\c :regress_db
INSERT INTO sk_rows VALUES (1, 'dn', 9) ON CONFLICT DO NOTHING;
SELECT mark FROM fencing.scopes WHERE scope = 'sk';
\c :regress_db
DO $$ BEGIN INSERT INTO sk_rows VALUES (1, 'dn', 9) ON CONFLICT DO NOTHING; END $$;
SELECT mark FROM fencing.scopes WHERE scope = 'sk';
\c :regress_db
DO $$ BEGIN INSERT INTO sk_col VALUES (1, 'sk', 'dn', 9) ON CONFLICT DO NOTHING; END $$;
SELECT mark FROM fencing.scopes WHERE scope = 'sk';
-- the leader at 5 still writes
UPDATE sk_rows SET v = 'leader again', tok = 5 WHERE id = 1;
-- one that writes its row raises the mark, seen or not
\c :regress_db
BEGIN;
DO $$ BEGIN INSERT INTO sk_rows VALUES (4, 'dn', 9) ON CONFLICT DO NOTHING; END $$;
SELECT mark FROM fencing.scopes WHERE scope = 'sk';
ROLLBACK;
-- DO UPDATE: the update half is an UPDATE assigning tok
LOAD 'fencing';
BEGIN;
INSERT INTO sk_rows VALUES (1, 'upsert', 8) ON CONFLICT (id) DO UPDATE SET v = excluded.v, tok = excluded.tok;
SELECT mark FROM fencing.scopes WHERE scope = 'sk';
ROLLBACK;
INSERT INTO sk_rows VALUES (1, 'upsert', 4) ON CONFLICT (id) DO UPDATE SET v = excluded.v, tok = excluded.tok;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO sk_rows VALUES (1, 'upsert', 5) ON CONFLICT (id) DO UPDATE SET v = excluded.v;
\echo :LAST_ERROR_SQLSTATE

-- 4. the leader's own row moving between partitions
LOAD 'fencing';
UPDATE sk_part SET part = 2, tok = 5 WHERE id = 1;
UPDATE sk_part SET part = 1 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fencing.use_token('sk', 5);
UPDATE sk_part SET part = 1 WHERE id = 1;
COMMIT;
-- MERGE moving it, with INSERT, UPDATE and DELETE actions
MERGE INTO sk_part t USING (VALUES (1), (2)) s(id) ON t.id = s.id
  WHEN MATCHED AND false THEN DELETE
  WHEN MATCHED THEN UPDATE SET part = 2, tok = 5
  WHEN NOT MATCHED THEN INSERT VALUES (s.id, 1, 'merged', 5);
MERGE INTO sk_part t USING (VALUES (2)) s(id) ON t.id = s.id
  WHEN MATCHED AND false THEN UPDATE SET part = 2, tok = 5
  WHEN MATCHED THEN DELETE;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fencing.use_token('sk', 5);
MERGE INTO sk_part t USING (VALUES (2)) s(id) ON t.id = s.id
  WHEN MATCHED AND false THEN UPDATE SET part = 2
  WHEN MATCHED THEN DELETE;
COMMIT;
-- a partition whose attribute numbers differ from its parent's: the
-- parent's v has the partition's tok number; judged in the partition's
CREATE TABLE sk_xp (id int, v text, tok bigint, part int) PARTITION BY LIST (part);
CREATE TABLE sk_xp1 (junk int, tok bigint, part int, v text, id int);
ALTER TABLE sk_xp1 DROP COLUMN junk;
ALTER TABLE sk_xp ATTACH PARTITION sk_xp1 FOR VALUES IN (1);
SELECT fencing.protect('sk_xp', 'tok', scope => 'sk');
INSERT INTO sk_xp VALUES (1, 'leader', 5, 1);
MERGE INTO sk_xp t USING (VALUES (1)) s(id) ON t.id = s.id
  WHEN MATCHED AND false THEN UPDATE SET v = 'zombie'
  WHEN MATCHED THEN UPDATE SET tok = 5, v = 'leader merge';
MERGE INTO sk_xp t USING (VALUES (1)) s(id) ON t.id = s.id
  WHEN MATCHED AND false THEN UPDATE SET tok = 99
  WHEN MATCHED THEN UPDATE SET v = 'zombie';
\echo :LAST_ERROR_SQLSTATE
SELECT id, v, tok FROM sk_xp;
DROP TABLE sk_xp;
-- unseen top-level UPDATE: known
\c :regress_db
UPDATE sk_part SET part = 1, tok = 5 WHERE id = 1;
\c :regress_db
UPDATE sk_part SET part = 2, tok = 5 WHERE id = 1;
-- unseen nested: a move leaving the token as it is cannot be told from a MERGE action; a new token can
\c :regress_db
DO $$ BEGIN UPDATE sk_part SET part = 1, tok = 5 WHERE id = 1; END $$;
\echo :LAST_ERROR_SQLSTATE
\c :regress_db
BEGIN;
DO $$ BEGIN UPDATE sk_part SET part = 1, tok = 6 WHERE id = 1; END $$;
SELECT id, part, tok FROM sk_part;
ROLLBACK;
\c :regress_db
UPDATE sk_part SET part = 1 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
SELECT id, part, v, tok FROM sk_part ORDER BY id;
SELECT mark FROM fencing.scopes WHERE scope = 'sk';

-- 5. stale writers are still refused, seen or not
\c :regress_db
UPDATE sk_rows SET tok = 4 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
\c :regress_db
DO $$ BEGIN UPDATE sk_skip SET tok = 4, v = 'skipped' WHERE id = 1; END $$;
SELECT v FROM sk_skip;
\c :regress_db
COPY sk_rows FROM stdin;
5	copy	4
\.
\echo :LAST_ERROR_SQLSTATE
SELECT id, v, tok FROM sk_rows ORDER BY id;

-- 6. neighbours a careless application reaches
LOAD 'fencing';
-- an upsert into a partitioned table (the partition's ResultRelInfo is routed)
INSERT INTO sk_part VALUES (1, 2, 'dn', 9) ON CONFLICT DO NOTHING;
SELECT mark FROM fencing.scopes WHERE scope = 'sk';
INSERT INTO sk_part VALUES (1, 2, 'du', 5) ON CONFLICT (id, part) DO UPDATE SET v = excluded.v;
\echo :LAST_ERROR_SQLSTATE
-- a trigger writing the same table, between the statement's rows
INSERT INTO sk_rows VALUES (3, 'third', 5);
CREATE FUNCTION sk_touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id = 1 AND pg_trigger_depth() = 1 THEN
    UPDATE sk_rows SET v = 'touched', tok = 5 WHERE id = 3;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER a_touch BEFORE UPDATE ON sk_rows FOR EACH ROW EXECUTE FUNCTION sk_touch();
UPDATE sk_rows SET v = 'multi', tok = 5 WHERE id IN (1, 2);
UPDATE sk_rows SET v = 'multi, tokenless' WHERE id IN (1, 2);
\echo :LAST_ERROR_SQLSTATE
SELECT id, v, tok FROM sk_rows ORDER BY id;
DROP TRIGGER a_touch ON sk_rows;
DELETE FROM sk_rows WHERE id = 3 AND fencing.use_token('sk', 5) = 5;
-- a MERGE in a SQL function
CREATE FUNCTION sk_sql_merge() RETURNS void LANGUAGE sql AS $$
  MERGE INTO sk_rows t USING (VALUES (1)) s(id) ON t.id = s.id
    WHEN MATCHED AND false THEN UPDATE SET tok = 99
    WHEN MATCHED THEN UPDATE SET v = 'zombie' $$;
SELECT sk_sql_merge();
\echo :LAST_ERROR_SQLSTATE
-- an INSTEAD OF trigger MERGEing, as a session's first statement and later
CREATE VIEW sk_iv AS SELECT id, v FROM sk_rows;
CREATE FUNCTION sk_iv_upd() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  MERGE INTO sk_rows t USING (VALUES (NEW.id)) s(id) ON t.id = s.id
    WHEN MATCHED AND false THEN UPDATE SET tok = 99
    WHEN MATCHED THEN UPDATE SET v = NEW.v;
  RETURN NEW;
END $$;
CREATE TRIGGER sk_iv_upd INSTEAD OF UPDATE ON sk_iv FOR EACH ROW EXECUTE FUNCTION sk_iv_upd();
\c :regress_db
UPDATE sk_iv SET v = 'zombie' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE sk_iv SET v = 'zombie' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
-- a PL/pgSQL FOR loop over an UPDATE ... RETURNING (its own portal), first
CREATE FUNCTION sk_loop() RETURNS int LANGUAGE plpgsql AS $$
DECLARE r record; n int := 0;
BEGIN
  FOR r IN UPDATE sk_rows SET v = 'loop', tok = 5 WHERE id = 2 RETURNING * LOOP n := n + 1; END LOOP;
  RETURN n;
END $$;
\c :regress_db
SELECT sk_loop();
-- an upsert whose rows are computed by a function that loads the library:
-- the raise waits for a written row, the lock goes when none is
CREATE FUNCTION sk_load(i int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN PERFORM fencing.committed_mark('sk'); RETURN i; END $$;
\c :regress_db
BEGIN;
DO $$ BEGIN INSERT INTO sk_rows SELECT sk_load(g), 'dn', 9 FROM generate_series(1, 2) g ON CONFLICT DO NOTHING; END $$;
SELECT mark FROM fencing.scopes WHERE scope = 'sk';
SELECT count(*) AS advisory_locks FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
ROLLBACK;
\c :regress_db
BEGIN;
INSERT INTO sk_rows SELECT sk_load(g), 'dn', 9 FROM generate_series(2, 4) g ON CONFLICT DO NOTHING;
SELECT mark FROM fencing.scopes WHERE scope = 'sk';
ROLLBACK;
DROP VIEW sk_iv;
DROP FUNCTION sk_touch(), sk_sql_merge(), sk_iv_upd(), sk_loop(), sk_load(int);
DROP VIEW sk_view;
DROP TABLE sk_rows, sk_skip, sk_decl, sk_col, sk_none, sk_part, sk_other;
DROP FUNCTION sk_merge(regclass);
DROP PROCEDURE sk_merge_proc();
