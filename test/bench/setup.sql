-- test/bench/setup.sql: schema and data for test/bench/run (psql, ON_ERROR_STOP).
--
-- "The same table": Postgres has one trigger set per table, so an unprotected
-- and a protected UPDATE cannot hit the very same relation (fencing.bypass
-- still fires the trigger).  We read it as the same table definition and the
-- same data, one copy per variant: identical columns, primary key, fillfactor
-- and rows, differing only in the trigger installed.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION fencing;

-- Terms: one for the fixed scope 'bench', one per shard '0' .. '63'.  The
-- epoch clock is global, so the 65 epochs differ; we then set every mark to
-- the highest one with reset_mark (a raise for all but the last scope), so
-- that one token, :tok, equals every scope's mark and every row's token and
-- nothing is raised during the run.
SELECT fencing.fence_next_epoch('bench', 'bench-setup') \g /dev/null
SELECT fencing.fence_next_epoch(g::text, 'bench-setup') FROM generate_series(0, 63) g \g /dev/null
SELECT max(mark) AS tok FROM fencing.scopes \gset
SELECT fencing.reset_mark(s, :tok)
  FROM (SELECT 'bench' UNION ALL SELECT g::text FROM generate_series(0, 63) g) x(s) \g /dev/null

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['bench_plain', 'bench_noop', 'bench_row', 'bench_scope1', 'bench_scope64', 'bench_scopecold', 'bench_scopeshared', 'bench_scopewarm', 'bench_plpgsql']
    LOOP
        EXECUTE format('CREATE TABLE %I (id int PRIMARY KEY, shard int NOT NULL, '
                       'v bigint NOT NULL, tok bigint NOT NULL) WITH (fillfactor = 90)', t);
        -- one scope per row in the scope* tables: their shard is id + 1000
        EXECUTE format('INSERT INTO %I SELECT g, %s, 0, %s FROM generate_series(1, 100000) g',
                       t, CASE WHEN t LIKE 'bench\_scope%%' AND t NOT IN ('bench_scope1', 'bench_scope64')
                               THEN 'g + 1000' ELSE 'g % 64' END,
                       (SELECT max(mark) FROM fencing.scopes));
    END LOOP;
END
$$;

SELECT fencing.protect('bench_row', 'tok') \g /dev/null
SELECT fencing.protect('bench_scope1', 'tok', scope => 'bench') \g /dev/null
SELECT fencing.protect('bench_scope64', 'tok', scope_column => 'shard') \g /dev/null

-- One scope per row: bench_scopecold's shard is its id + 1000, and each of the
-- 100,000 scopes exists with the mark :tok (registered directly: issuing
-- 100,000 terms would take minutes and prove nothing more).  A backend that
-- updates rows at random meets a scope it has not seen at almost every
-- UPDATE, as a connection pool in front of a table of many tenants does.
-- bench_scopewarm has 10,000 rows more, of 10,000 scopes more: the others
-- that test/bench/callgrind writes to push the measured ones out of the
-- backend's own cache
INSERT INTO bench_scopewarm SELECT g, g + 1000, 0, :tok FROM generate_series(100001, 110000) g;
INSERT INTO fencing.scopes (scope, mark, owner, tokens)
  SELECT (g + 1000)::text, :tok, 'postgres'::regrole, 'issued' FROM generate_series(1, 110000) g;
SELECT fencing.protect('bench_scopecold', 'tok', scope_column => 'shard') \g /dev/null
-- the same scopes in two more tables: test/bench/callgrind's scopeshared
-- writes bench_scopewarm first, so that the marks are in shared memory, and
-- then measures bench_scopeshared, whose pages nothing wrote before
SELECT fencing.protect('bench_scopeshared', 'tok', scope_column => 'shard') \g /dev/null
SELECT fencing.protect('bench_scopewarm', 'tok', scope_column => 'shard') \g /dev/null

-- Reference: the floor of any BEFORE ROW UPDATE trigger written in C.  The
-- built-in suppress_redundant_updates_trigger() compares OLD and NEW and, as
-- v always changes, lets every row through; what it costs is mostly Postgres's
-- trigger machinery (ExecBRUpdateTriggers locks the row first, which writes a
-- heap lock WAL record, then calls the function).
CREATE TRIGGER noop_row BEFORE UPDATE ON bench_noop
    FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger();

-- Reference: what a user writes by hand for the per-row check of an UPDATE.
-- (Weaker than the fence: it cannot see whether the statement assigned tok.)
CREATE FUNCTION bench_plpgsql_fence() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.tok IS NULL THEN
        RAISE EXCEPTION 'missing fencing token';
    END IF;
    IF NEW.tok < OLD.tok THEN
        RAISE EXCEPTION 'stale fencing token % < %', NEW.tok, OLD.tok;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER fence_row BEFORE UPDATE ON bench_plpgsql
    FOR EACH ROW EXECUTE FUNCTION bench_plpgsql_fence();

VACUUM (FREEZE, ANALYZE);
CHECKPOINT;
SELECT :tok AS token;
