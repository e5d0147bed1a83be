-- 49_merge_view_default_pg17: a view column's DEFAULT supplies no token
-- through MERGE either.  From PostgreSQL 17 MERGE writes auto-updatable
-- views, and the rewriter fills the view's DEFAULT into each INSERT and
-- UPDATE action as it does into an INSERT or UPDATE; one rule judges every
-- action of every statement kind: ZF002 unless the transaction declared a
-- token.  Neighbours: nested views, renamed and swapped columns, a DEFAULT
-- on another column, a partitioned table, a writable CTE, a session's first
-- statement (and one nested in it), a view with rules (MERGE refuses it)
-- and one with INSTEAD OF triggers (the trigger's own statement writes the
-- table: it supplies its token like any writer, as documented).  On older
-- servers the test says so and stops (49_merge_view_default_pg17_1.out).
\set SHOW_CONTEXT never
SELECT current_setting('server_version_num')::int >= 170000 AS pg17 \gset
\if :pg17
\else
\echo skipped: MERGE into a view needs PostgreSQL 17
\quit
\endif

-- tokens from the caller's lock service; the old leader held 5, the new
-- one holds 7, and the view's DEFAULT is 7 (the current mark)
SELECT fencing.create_scope('mvd', tokens => 'external');
\set old 5
\set new 7
CREATE TABLE mv (k int PRIMARY KEY, v text, tok bigint);
SELECT fencing.protect('mv', 'tok', scope => 'mvd');
INSERT INTO mv VALUES (1, 'old leader', :old);
INSERT INTO mv VALUES (2, 'new leader', :new);
CREATE VIEW mv_def AS SELECT k AS key, v AS payload, tok AS term FROM mv;
ALTER VIEW mv_def ALTER COLUMN term SET DEFAULT 7;

-- NOT MATCHED THEN INSERT naming no token
MERGE INTO mv_def t USING (VALUES (31)) s(k) ON t.key = s.k
  WHEN NOT MATCHED THEN INSERT (key, payload) VALUES (s.k, 'Z');
\echo :SQLSTATE
-- NOT MATCHED THEN INSERT VALUES (..., DEFAULT)
MERGE INTO mv_def t USING (VALUES (32)) s(k) ON t.key = s.k
  WHEN NOT MATCHED THEN INSERT VALUES (s.k, 'Z', DEFAULT);
\echo :SQLSTATE
-- MATCHED THEN UPDATE SET term = DEFAULT on the old leader's row
MERGE INTO mv_def t USING (VALUES (1)) s(k) ON t.key = s.k
  WHEN MATCHED THEN UPDATE SET payload = 'Z', term = DEFAULT;
\echo :SQLSTATE
-- NOT MATCHED BY SOURCE THEN UPDATE SET term = DEFAULT
MERGE INTO mv_def t USING (VALUES (2)) s(k) ON t.key = s.k
  WHEN NOT MATCHED BY SOURCE THEN UPDATE SET payload = 'Z', term = DEFAULT;
\echo :SQLSTATE
-- a value written through the view column cannot be told from its DEFAULT
MERGE INTO mv_def t USING (VALUES (33)) s(k) ON t.key = s.k
  WHEN NOT MATCHED THEN INSERT VALUES (s.k, 'Z', 7);
\echo :SQLSTATE
-- with RETURNING, and in a writable CTE
MERGE INTO mv_def t USING (VALUES (34)) s(k) ON t.key = s.k
  WHEN NOT MATCHED THEN INSERT (key, payload) VALUES (s.k, 'Z')
  RETURNING merge_action(), t.key, t.term;
\echo :SQLSTATE
WITH m AS (MERGE INTO mv_def t USING (VALUES (1)) s(k) ON t.key = s.k
             WHEN MATCHED THEN UPDATE SET term = DEFAULT
             RETURNING merge_action() AS action, t.key)
SELECT * FROM m;
\echo :SQLSTATE
-- the plain statements: the same answer
INSERT INTO mv_def (key, payload) VALUES (35, 'Z');
\echo :SQLSTATE
UPDATE mv_def SET payload = 'Z', term = DEFAULT WHERE key = 1;
\echo :SQLSTATE
-- an UPDATE action that does not assign the token column has none either
MERGE INTO mv_def t USING (VALUES (2)) s(k) ON t.key = s.k
  WHEN MATCHED THEN UPDATE SET payload = 'Z';
\echo :SQLSTATE
SELECT k, v, tok FROM mv ORDER BY k;

-- a declared token is the write's token, in every action: the DEFAULT
-- (now 6) is overwritten
ALTER VIEW mv_def ALTER COLUMN term SET DEFAULT 6;
BEGIN;
SELECT fencing.use_token('mvd', :new) IS NOT NULL AS declared;
MERGE INTO mv_def t USING (VALUES (1), (36)) s(k) ON t.key = s.k
  WHEN MATCHED THEN UPDATE SET payload = 'declared', term = DEFAULT
  WHEN NOT MATCHED THEN INSERT (key, payload) VALUES (s.k, 'declared')
  WHEN NOT MATCHED BY SOURCE THEN UPDATE SET payload = 'declared by source', term = DEFAULT
  RETURNING merge_action(), t.key, t.term;
COMMIT;
-- a stale declared token is refused as ever
BEGIN;
SELECT fencing.use_token('mvd', :old) IS NOT NULL AS declared;
MERGE INTO mv_def t USING (VALUES (37)) s(k) ON t.key = s.k
  WHEN NOT MATCHED THEN INSERT (key, payload) VALUES (s.k, 'stale');
\echo :SQLSTATE
ROLLBACK;
ALTER VIEW mv_def ALTER COLUMN term SET DEFAULT 7;

-- a view over the view: the inner view's DEFAULT fills the column
CREATE VIEW mv_outer AS SELECT * FROM mv_def WHERE key > 0;
MERGE INTO mv_outer t USING (VALUES (40)) s(k) ON t.key = s.k
  WHEN NOT MATCHED THEN INSERT (key, payload) VALUES (s.k, 'Z');
\echo :SQLSTATE
-- (an UPDATE's DEFAULT is the outer view's own: none, so NULL, no token)
MERGE INTO mv_outer t USING (VALUES (1)) s(k) ON t.key = s.k
  WHEN MATCHED THEN UPDATE SET term = DEFAULT;
\echo :SQLSTATE
-- the outer view's own DEFAULT, over a view without one
CREATE VIEW mv_plain AS SELECT k, v, tok FROM mv;
CREATE VIEW mv_outer_def AS SELECT k AS id, tok AS t, v FROM mv_plain;
ALTER VIEW mv_outer_def ALTER COLUMN t SET DEFAULT 7;
MERGE INTO mv_outer_def o USING (VALUES (41)) s(k) ON o.id = s.k
  WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.k, 'Z');
\echo :SQLSTATE
-- the view without a DEFAULT takes the token written
MERGE INTO mv_plain t USING (VALUES (42)) s(k) ON t.k = s.k
  WHEN NOT MATCHED THEN INSERT VALUES (s.k, 'plain', 7);
\echo :SQLSTATE

-- swapped columns: the DEFAULT of the view column named tok fills the
-- table's v, not its token: the token written counts
CREATE VIEW mv_swap AS SELECT k, tok AS v, v AS tok FROM mv;
ALTER VIEW mv_swap ALTER COLUMN tok SET DEFAULT 'swapped';
MERGE INTO mv_swap t USING (VALUES (43)) s(k) ON t.k = s.k
  WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, 7);
\echo :SQLSTATE
-- and the DEFAULT of the view column named v is the token's
ALTER VIEW mv_swap ALTER COLUMN v SET DEFAULT 7;
MERGE INTO mv_swap t USING (VALUES (44)) s(k) ON t.k = s.k
  WHEN NOT MATCHED THEN INSERT (k) VALUES (s.k);
\echo :SQLSTATE

-- a view over a partitioned table: the row goes to a partition, the view's
-- DEFAULT is found for the partitioned table's column
CREATE TABLE mvp (k int, v text, tok bigint, PRIMARY KEY (k)) PARTITION BY RANGE (k);
CREATE TABLE mvp_low PARTITION OF mvp FOR VALUES FROM (0) TO (100);
SELECT fencing.protect('mvp', 'tok', scope => 'mvd');
CREATE VIEW mvp_def AS SELECT k, v, tok AS term FROM mvp;
ALTER VIEW mvp_def ALTER COLUMN term SET DEFAULT 7;
MERGE INTO mvp_def t USING (VALUES (50)) s(k) ON t.k = s.k
  WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, 'Z');
\echo :SQLSTATE
MERGE INTO mvp t USING (VALUES (51)) s(k) ON t.k = s.k
  WHEN NOT MATCHED THEN INSERT VALUES (s.k, 'table', 7);
\echo :SQLSTATE
MERGE INTO mvp_def t USING (VALUES (51)) s(k) ON t.k = s.k
  WHEN MATCHED THEN UPDATE SET term = DEFAULT;
\echo :SQLSTATE
SELECT k, v, tok FROM mvp ORDER BY k;

-- a view with rules: MERGE refuses it (PostgreSQL), before any trigger
CREATE VIEW mv_rule AS SELECT k, v, tok FROM mv;
ALTER VIEW mv_rule ALTER COLUMN tok SET DEFAULT 7;
CREATE RULE mv_rule_insert AS ON INSERT TO mv_rule
  DO INSTEAD INSERT INTO mv VALUES (NEW.k, NEW.v, NEW.tok);
MERGE INTO mv_rule t USING (VALUES (60)) s(k) ON t.k = s.k
  WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, 'Z');
\echo :SQLSTATE

-- a view with INSTEAD OF triggers: the view is not written, the trigger's
-- own statement writes the table and is judged like any writer (its token
-- is what it writes: here the view's DEFAULT, through NEW)
CREATE VIEW mv_iot AS SELECT k, v, tok FROM mv;
ALTER VIEW mv_iot ALTER COLUMN tok SET DEFAULT 7;
CREATE FUNCTION mv_iot_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO public.mv VALUES (NEW.k, NEW.v, NEW.tok);
  ELSE
    UPDATE public.mv SET v = NEW.v, tok = NEW.tok WHERE k = OLD.k;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER mv_iot_write INSTEAD OF INSERT OR UPDATE ON mv_iot
  FOR EACH ROW EXECUTE FUNCTION mv_iot_write();
MERGE INTO mv_iot t USING (VALUES (61)) s(k) ON t.k = s.k
  WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, 'instead of');
\echo :SQLSTATE
ALTER VIEW mv_iot ALTER COLUMN tok SET DEFAULT 5;
MERGE INTO mv_iot t USING (VALUES (62)) s(k) ON t.k = s.k
  WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, 'instead of, stale');
\echo :SQLSTATE

-- a session's first statement (the library loads in its middle, no hook
-- saw it start): at top level it is known, and judged the same
SELECT current_database() AS regress_db \gset
\c :regress_db
MERGE INTO mv_def t USING (VALUES (70)) s(k) ON t.key = s.k
  WHEN NOT MATCHED THEN INSERT (key, payload) VALUES (s.k, 'first statement');
\echo :SQLSTATE
\c :regress_db
MERGE INTO mv_def t USING (VALUES (1)) s(k) ON t.key = s.k
  WHEN MATCHED THEN UPDATE SET payload = 'first statement', term = DEFAULT;
\echo :SQLSTATE
-- nested in it (a DO block) it is not known: refused (55000), the retry is seen
\c :regress_db
DO $$ BEGIN
  MERGE INTO public.mv_def t USING (VALUES (71)) s(k) ON t.key = s.k
    WHEN NOT MATCHED THEN INSERT (key, payload) VALUES (s.k, 'nested');
END $$;
\echo :SQLSTATE
DO $$ BEGIN
  MERGE INTO public.mv_def t USING (VALUES (71)) s(k) ON t.key = s.k
    WHEN NOT MATCHED THEN INSERT (key, payload) VALUES (s.k, 'nested, retried');
END $$;
\echo :SQLSTATE

SELECT k, v, tok FROM mv ORDER BY k;
SELECT mark FROM fencing.scopes WHERE scope = 'mvd';

DROP VIEW mv_iot;
DROP FUNCTION mv_iot_write();
DROP VIEW mv_rule, mv_swap, mv_outer_def, mv_plain, mv_outer, mv_def, mvp_def;
SELECT fencing.unprotect('mv');
SELECT fencing.unprotect('mvp');
DROP TABLE mv, mvp;
