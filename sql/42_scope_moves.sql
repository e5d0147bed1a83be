-- 42_scope_moves: an UPDATE that changes a row's scope column writes to two
-- scopes: it removes the row from its scope s and adds it to scope t.  Each
-- scope admits the write only with the token the write carries for that
-- scope (declared for it, or for every scope; with tokens => 'column' and
-- no declaration for either scope, the token column the statement
-- assigned), and each scope's mark is raised only with its own token.
-- 1.3 judged both scopes with t's token: the stale leader of s (100, mark
-- 200) moved the new leader's row out of s and raised both marks to 300.
-- Marks here come from takeover(): external scopes, no global sequence.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
LOAD 'fencing';
CREATE FUNCTION mv_marks(prefix text) RETURNS TABLE (scope text, mark bigint)
  LANGUAGE sql AS $$
    SELECT scope, mark FROM fencing.scopes
     WHERE scope LIKE prefix || '%' ORDER BY scope COLLATE "C"
$$;

-- 1. Token column (tokens => 'column'), policy error: scopes mc-s (mark 200,
-- its new leader holds 200) and mc-t (mark 250).
SELECT fencing.takeover('mc-s', 200) AS s_before, fencing.takeover('mc-t', 250) AS t_before;
CREATE TABLE mv_col (id int PRIMARY KEY, sc text NOT NULL, v text, tok bigint);
SELECT fencing.protect('mv_col', 'tok', scope_column => 'sc');
INSERT INTO mv_col VALUES (1, 'mc-s', 'new leader of s', 200), (2, 'mc-s', 'new leader of s', 200),
                          (3, 'mc-t', 'leader of t', 250), (4, 'mc-s', 'new leader of s', 200);
-- the issue's case: the stale leader of s declared 100 for s and writes 300
-- into the token column: s refuses it (1.3: accepted, s and t raised to 300)
BEGIN;
SELECT fencing.use_token('mc-s', 100);
UPDATE mv_col SET sc = 'mc-t', tok = 300 WHERE id = 1;
ROLLBACK;
-- a token declared for t alone never takes a row out of s (1.3: accepted,
-- s raised to t's token): no token for s, ZF002
BEGIN;
SELECT fencing.use_token('mc-t', 300);
UPDATE mv_col SET sc = 'mc-t', tok = 300 WHERE id = 1;
ROLLBACK;
BEGIN;
SELECT fencing.use_token('mc-t', 250);
UPDATE mv_col SET sc = 'mc-t' WHERE id = 1;
ROLLBACK;
-- the token column alone is the write's one token, for both scopes
UPDATE mv_col SET sc = 'mc-t', tok = 200 WHERE id = 1;
SELECT * FROM mv_marks('mc-');
-- the leader of s (200) moving a row into t, whose token (300) raises t:
-- s keeps its mark (1.3 raised it to 300 and fenced s's leader)
BEGIN;
SELECT fencing.use_token('mc-s', 200);
UPDATE mv_col SET sc = 'mc-t', tok = 300 WHERE id = 1;
COMMIT;
SELECT id, sc, tok FROM mv_col ORDER BY id;
SELECT * FROM mv_marks('mc-');
-- a token declared for each scope: each judged and raised with its own
BEGIN;
SELECT fencing.use_token('mc-s', 210);
SELECT fencing.use_token('mc-t', 300);
UPDATE mv_col SET sc = 'mc-t' WHERE id = 2;
COMMIT;
SELECT id, sc, tok FROM mv_col ORDER BY id;
SELECT * FROM mv_marks('mc-');
-- the same for a move back: t is left with t's token
BEGIN;
SELECT fencing.use_token('mc-s', 210);
SELECT fencing.use_token('mc-t', 250);
UPDATE mv_col SET sc = 'mc-s' WHERE id = 2;
ROLLBACK;
BEGIN;
SELECT fencing.use_token('mc-s', 210);
SELECT fencing.use_token('mc-t', 300);
UPDATE mv_col SET sc = 'mc-s' WHERE id = 2;
COMMIT;
SELECT id, sc, tok FROM mv_col ORDER BY id;
SELECT * FROM mv_marks('mc-');
-- a token declared for every scope is the write's token for both
BEGIN;
SELECT fencing.use_token(300);
UPDATE mv_col SET sc = 'mc-t' WHERE id = 4;
SELECT id, sc, tok FROM mv_col WHERE id = 4;
SELECT * FROM mv_marks('mc-');
ROLLBACK;
-- setting the scope column to the value it has is no move: only s's token
-- counts, t is not touched
BEGIN;
SELECT fencing.use_token('mc-s', 100);
SELECT fencing.use_token('mc-t', 300);
UPDATE mv_col SET sc = 'mc-s' WHERE id = 4;
ROLLBACK;
BEGIN;
SELECT fencing.use_token('mc-s', 210);
SELECT fencing.use_token('mc-t', 999);
UPDATE mv_col SET sc = sc, v = 'same scope' WHERE id = 4;
COMMIT;
SELECT id, sc, v, tok FROM mv_col WHERE id = 4;
SELECT * FROM mv_marks('mc-');

-- 2. The row's own token is the mark of the scope it leaves: judged with
-- that scope's token.  Scope mr-s was lowered by its owner below a row's
-- token (reset_mark).
SELECT fencing.takeover('mr-s', 200) AS s_before, fencing.takeover('mr-t', 250) AS t_before;
INSERT INTO mv_col VALUES (5, 'mr-s', 'row at 200', 200);
SELECT fencing.reset_mark('mr-s', 150);
BEGIN;
SELECT fencing.use_token('mr-s', 170);
SELECT fencing.use_token('mr-t', 300);
UPDATE mv_col SET sc = 'mr-t' WHERE id = 5;
ROLLBACK;
SELECT id, sc, tok FROM mv_col WHERE id = 5;
SELECT * FROM mv_marks('mr-');

-- 3. Policy skip: a move the scope it leaves does not admit is left out
-- (nothing raised, no lock kept); a missing token is still an error.
SELECT fencing.takeover('mk-s', 200) AS s_before, fencing.takeover('mk-t', 250) AS t_before,
       fencing.takeover('mk-u', 100) AS u_before;
CREATE TABLE mv_skip (id int PRIMARY KEY, sc text NOT NULL, v text, tok bigint);
SELECT fencing.protect('mv_skip', 'tok', scope_column => 'sc', on_stale => 'skip');
INSERT INTO mv_skip VALUES (1, 'mk-s', 'leader of s', 200), (2, 'mk-u', 'leader of u', 100),
                           (3, 'mk-s', 'leader of s', 200);
BEGIN;
SELECT fencing.use_token('mk-s', 100);
UPDATE mv_skip SET sc = 'mk-t', tok = 300 WHERE id = 1;
SELECT count(*) AS scope_locks_kept FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = -511;
COMMIT;
BEGIN;
SELECT fencing.use_token('mk-t', 300);
UPDATE mv_skip SET sc = 'mk-t', tok = 300 WHERE id = 1;
ROLLBACK;
SELECT id, sc, tok FROM mv_skip ORDER BY id;
SELECT * FROM mv_marks('mk-');
-- several rows, several scopes: the rows leaving s (stale) stay, u's moves
BEGIN;
SELECT fencing.use_token('mk-s', 100);
SELECT fencing.use_token('mk-u', 100);
SELECT fencing.use_token('mk-t', 250);
UPDATE mv_skip SET sc = 'mk-t' WHERE id IN (1, 2, 3);
COMMIT;
SELECT id, sc, tok FROM mv_skip ORDER BY id;
SELECT * FROM mv_marks('mk-');
-- and with s's current token all move
BEGIN;
SELECT fencing.use_token('mk-s', 200);
SELECT fencing.use_token('mk-t', 250);
UPDATE mv_skip SET sc = 'mk-t' WHERE sc = 'mk-s';
COMMIT;
SELECT id, sc, tok FROM mv_skip ORDER BY id;
SELECT * FROM mv_marks('mk-');

-- 4. Declared tokens only (tokens => 'declared'): each scope needs its own
-- declaration (or one for every scope).
SELECT fencing.takeover('md-s', 200) AS s_before, fencing.takeover('md-t', 250) AS t_before;
CREATE TABLE mv_decl (id int PRIMARY KEY, sc text NOT NULL, v text, tok bigint);
SELECT fencing.protect('mv_decl', 'tok', scope_column => 'sc', tokens => 'declared');
BEGIN;
SELECT fencing.use_token('md-s', 200);
SELECT fencing.use_token('md-t', 250);
INSERT INTO mv_decl VALUES (1, 'md-s', 'leader of s', NULL), (2, 'md-s', 'leader of s', NULL);
COMMIT;
BEGIN;
SELECT fencing.use_token('md-t', 300);
UPDATE mv_decl SET sc = 'md-t' WHERE id = 1;
ROLLBACK;
BEGIN;
SELECT fencing.use_token('md-s', 100);
SELECT fencing.use_token('md-t', 300);
UPDATE mv_decl SET sc = 'md-t' WHERE id = 1;
ROLLBACK;
SELECT * FROM mv_marks('md-');
BEGIN;
SELECT fencing.use_token('md-s', 200);
SELECT fencing.use_token('md-t', 250);
UPDATE mv_decl SET sc = 'md-t' WHERE id = 1;
COMMIT;
-- s raised with s's token only
BEGIN;
SELECT fencing.use_token('md-s', 220);
SELECT fencing.use_token('md-t', 250);
UPDATE mv_decl SET sc = 'md-t' WHERE id = 2;
COMMIT;
SELECT id, sc, tok FROM mv_decl ORDER BY id;
SELECT * FROM mv_marks('md-');

-- 5. A partitioned table whose partition key is the scope column: the row
-- moves to another partition (DELETE from s's partition, INSERT into t's),
-- each half judged with its own scope's token.
SELECT fencing.takeover('mp-s', 200) AS s_before, fencing.takeover('mp-t', 250) AS t_before;
CREATE TABLE mv_part (id int, sc text NOT NULL, v text, tok bigint, PRIMARY KEY (sc, id))
  PARTITION BY LIST (sc);
CREATE TABLE mv_part_s PARTITION OF mv_part FOR VALUES IN ('mp-s');
CREATE TABLE mv_part_t PARTITION OF mv_part FOR VALUES IN ('mp-t');
SELECT fencing.protect('mv_part', 'tok', scope_column => 'sc');
INSERT INTO mv_part VALUES (1, 'mp-s', 'leader of s', 200), (2, 'mp-s', 'leader of s', 200);
BEGIN;
SELECT fencing.use_token('mp-s', 100);
UPDATE mv_part SET sc = 'mp-t', tok = 300 WHERE id = 1;
ROLLBACK;
BEGIN;
SELECT fencing.use_token('mp-t', 300);
UPDATE mv_part SET sc = 'mp-t', tok = 300 WHERE id = 1;
ROLLBACK;
SELECT * FROM mv_marks('mp-');
BEGIN;
SELECT fencing.use_token('mp-s', 200);
UPDATE mv_part SET sc = 'mp-t', tok = 300 WHERE id = 1;
COMMIT;
BEGIN;
SELECT fencing.use_token('mp-s', 200);
SELECT fencing.use_token('mp-t', 300);
UPDATE mv_part SET sc = 'mp-t' WHERE id = 2;
COMMIT;
SELECT tableoid::regclass AS part, id, sc, tok FROM mv_part ORDER BY id;
SELECT * FROM mv_marks('mp-');
-- with declared tokens only and policy skip
SELECT fencing.takeover('mq-s', 200) AS s_before, fencing.takeover('mq-t', 250) AS t_before;
CREATE TABLE mv_partq (id int, sc text NOT NULL, v text, tok bigint, PRIMARY KEY (sc, id))
  PARTITION BY LIST (sc);
CREATE TABLE mv_partq_s PARTITION OF mv_partq FOR VALUES IN ('mq-s');
CREATE TABLE mv_partq_t PARTITION OF mv_partq FOR VALUES IN ('mq-t');
SELECT fencing.protect('mv_partq', 'tok', scope_column => 'sc', on_stale => 'skip', tokens => 'declared');
BEGIN;
SELECT fencing.use_token('mq-s', 200);
INSERT INTO mv_partq VALUES (1, 'mq-s', 'leader of s', NULL), (2, 'mq-s', 'leader of s', NULL);
COMMIT;
BEGIN;
SELECT fencing.use_token('mq-s', 100);
SELECT fencing.use_token('mq-t', 300);
UPDATE mv_partq SET sc = 'mq-t' WHERE id = 1;
COMMIT;
BEGIN;
SELECT fencing.use_token('mq-t', 300);
UPDATE mv_partq SET sc = 'mq-t' WHERE id = 1;
ROLLBACK;
BEGIN;
SELECT fencing.use_token('mq-s', 200);
SELECT fencing.use_token('mq-t', 250);
UPDATE mv_partq SET sc = 'mq-t' WHERE id = 2;
COMMIT;
SELECT tableoid::regclass AS part, id, sc, tok FROM mv_partq ORDER BY id;
SELECT * FROM mv_marks('mq-');

-- 6. Neighbours: several rows moving among several scopes in one UPDATE,
-- MERGE's UPDATE action, INSERT ... ON CONFLICT DO UPDATE, and an UPDATE
-- the fence did not see start (nested, the session's first statement).
SELECT fencing.takeover('mn-a', 100) AS a_before, fencing.takeover('mn-b', 200) AS b_before,
       fencing.takeover('mn-c', 300) AS c_before;
CREATE TABLE mv_nb (id int PRIMARY KEY, sc text NOT NULL, v text, tok bigint);
SELECT fencing.protect('mv_nb', 'tok', scope_column => 'sc');
INSERT INTO mv_nb VALUES (1, 'mn-a', 'a', 100), (2, 'mn-b', 'b', 200), (3, 'mn-c', 'c', 300);
-- a -> b -> c -> a: the stale token for b refuses the whole statement
BEGIN;
SELECT fencing.use_token('mn-a', 100);
SELECT fencing.use_token('mn-b', 150);
SELECT fencing.use_token('mn-c', 300);
UPDATE mv_nb SET sc = CASE sc WHEN 'mn-a' THEN 'mn-b' WHEN 'mn-b' THEN 'mn-c' ELSE 'mn-a' END;
ROLLBACK;
BEGIN;
SELECT fencing.use_token('mn-a', 100);
SELECT fencing.use_token('mn-b', 200);
SELECT fencing.use_token('mn-c', 300);
UPDATE mv_nb SET sc = CASE sc WHEN 'mn-a' THEN 'mn-b' WHEN 'mn-b' THEN 'mn-c' ELSE 'mn-a' END;
COMMIT;
SELECT id, sc, tok FROM mv_nb ORDER BY id;
SELECT * FROM mv_marks('mn-');
-- MERGE: the UPDATE action that moves the row is judged like an UPDATE
BEGIN;
SELECT fencing.use_token('mn-a', 50);
MERGE INTO mv_nb m USING (VALUES (3)) v(id) ON m.id = v.id
  WHEN MATCHED THEN UPDATE SET sc = 'mn-c', tok = 400;
ROLLBACK;
BEGIN;
SELECT fencing.use_token('mn-c', 400);
MERGE INTO mv_nb m USING (VALUES (3)) v(id) ON m.id = v.id
  WHEN MATCHED THEN UPDATE SET sc = 'mn-c';
ROLLBACK;
BEGIN;
SELECT fencing.use_token('mn-a', 100);
MERGE INTO mv_nb m USING (VALUES (3)) v(id) ON m.id = v.id
  WHEN MATCHED AND false THEN UPDATE SET v = 'not run'
  WHEN MATCHED THEN UPDATE SET sc = 'mn-c', tok = 400;
COMMIT;
SELECT id, sc, tok FROM mv_nb ORDER BY id;
SELECT * FROM mv_marks('mn-');
-- INSERT ... ON CONFLICT DO UPDATE moving the existing row (in mn-b) to the
-- proposed row's scope (mn-a): b must admit it with b's token
BEGIN;
SELECT fencing.use_token('mn-b', 150);
INSERT INTO mv_nb VALUES (1, 'mn-a', 'upsert', 500)
  ON CONFLICT (id) DO UPDATE SET sc = excluded.sc, v = excluded.v, tok = excluded.tok;
ROLLBACK;
BEGIN;
SELECT fencing.use_token('mn-a', 500);
INSERT INTO mv_nb VALUES (1, 'mn-a', 'upsert', NULL)
  ON CONFLICT (id) DO UPDATE SET sc = excluded.sc, v = excluded.v;
ROLLBACK;
SELECT * FROM mv_marks('mn-');
BEGIN;
SELECT fencing.use_token('mn-b', 200);
INSERT INTO mv_nb VALUES (1, 'mn-a', 'upsert', 500)
  ON CONFLICT (id) DO UPDATE SET sc = excluded.sc, v = excluded.v, tok = excluded.tok;
COMMIT;
SELECT id, sc, v, tok FROM mv_nb ORDER BY id;
SELECT * FROM mv_marks('mn-');
-- not seen start (nested in DO, the session's first statement): the same
\c :regress_db
DO $$ BEGIN
  PERFORM fencing.use_token('mn-a', 100);
  UPDATE mv_nb SET sc = 'mn-b', tok = 600 WHERE id = 1;
END $$;
\c :regress_db
DO $$ BEGIN
  PERFORM fencing.use_token('mn-b', 600);
  UPDATE mv_nb SET sc = 'mn-b', tok = 600 WHERE id = 1;
END $$;
\c :regress_db
BEGIN;
DO $$ BEGIN
  PERFORM fencing.use_token('mn-a', 500);
  UPDATE mv_nb SET sc = 'mn-b', tok = 600 WHERE id = 1;
END $$;
COMMIT;
SELECT id, sc, v, tok FROM mv_nb ORDER BY id;
SELECT * FROM mv_marks('mn-');

-- 7. A fixed scope has no scope to leave (a partition move stays in it):
-- judged as before, with that scope's token
CREATE TABLE mv_fixed (id int, part int, v text, tok bigint, PRIMARY KEY (id, part))
  PARTITION BY LIST (part);
CREATE TABLE mv_fixed1 PARTITION OF mv_fixed FOR VALUES IN (1);
CREATE TABLE mv_fixed2 PARTITION OF mv_fixed FOR VALUES IN (2);
SELECT fencing.protect('mv_fixed', 'tok', scope => 'mf-s');
SELECT fencing.takeover('mf-s', 200) AS f_before;
INSERT INTO mv_fixed VALUES (1, 1, 'fixed', 200);
UPDATE mv_fixed SET part = 2, tok = 100 WHERE id = 1;
BEGIN;
SELECT fencing.use_token('mf-other', 300);
UPDATE mv_fixed SET part = 2 WHERE id = 1;
ROLLBACK;
BEGIN;
SELECT fencing.use_token('mf-s', 200);
UPDATE mv_fixed SET part = 2 WHERE id = 1;
COMMIT;
SELECT tableoid::regclass AS part, id, tok FROM mv_fixed;
SELECT * FROM mv_marks('mf-');

DROP TABLE mv_col, mv_skip, mv_decl, mv_part, mv_partq, mv_nb, mv_fixed;
DROP FUNCTION mv_marks(text);
