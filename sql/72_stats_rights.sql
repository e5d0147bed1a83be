-- 72_stats_rights: who a rejection is counted for.
-- A rejection counts under the scope it names only when the scope exists and
-- the table written is bound to it (its owner holds "write" on the scope), or,
-- with no table (takeover()), the caller holds it; otherwise under the table
-- only.  Each rejection names its table or none: the error's table fields,
-- and the log line.  pg_regress does not preload the library, so the
-- counters themselves are tested by test/tap/010_stats_rights.pl; here the log
-- lines (at NOTICE) say where each rejection is counted, and the errors
-- carry their table.
-- Its own database: the terms it takes do not shift the other files' numbers.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
CREATE DATABASE fencing_stats_rights;
\c fencing_stats_rights
SET client_min_messages = warning;
CREATE EXTENSION fencing;
RESET client_min_messages;
CREATE ROLE regress_sr_victim;
CREATE ROLE regress_sr_stranger;
-- a superuser of a fixed name: the rejections logged below name the role,
-- and the bootstrap superuser is named after whoever ran initdb
CREATE ROLE regress_sr_admin SUPERUSER;
CREATE SCHEMA victim AUTHORIZATION regress_sr_victim;
CREATE SCHEMA stranger AUTHORIZATION regress_sr_stranger;
GRANT EXECUTE ON FUNCTION fencing.create_scope(text, text, regrole) TO regress_sr_victim;

-- the victim: its scope (issued terms) and a table bound to it
SET ROLE regress_sr_victim;
SELECT fencing.create_scope('victim-scope');
CREATE TABLE victim.t (id int PRIMARY KEY, v text, tok bigint);
SELECT fencing.protect('victim.t', 'tok', scope => 'victim-scope');
SELECT fencing.fence_next_epoch('victim-scope', 'leader-1') AS t1 \gset
INSERT INTO victim.t VALUES (1, 'one', :t1);
RESET ROLE;

SET fencing.log_rejections = notice;
SET fencing.log_skips = notice;
SET application_name = 'forger';

-- 1. a stranger's own table with a scope column, its rows naming the
-- victim's scope: ZF002 and ZF005 come before the binding check, and are
-- counted under the stranger's table only; a junk scope likewise
SET ROLE regress_sr_stranger;
CREATE TABLE stranger.rows (id int, scope text, tok bigint);
SELECT fencing.protect('stranger.rows', 'tok', scope_column => 'scope');
INSERT INTO stranger.rows (id, scope) VALUES (1, 'victim-scope');
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fencing.use_token('victim-scope', 5);
INSERT INTO stranger.rows VALUES (1, 'victim-scope', 6);
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO stranger.rows (id, scope) VALUES (1, 'junk-1');
\echo :LAST_ERROR_SQLSTATE
-- with a token, the binding check refuses the row before any lock (42501)
INSERT INTO stranger.rows VALUES (1, 'victim-scope', 1);
\echo :LAST_ERROR_SQLSTATE
-- a trigger made by hand, binding the stranger's table to the victim's
-- scope: the stranger protected a table of its own, so it may execute the
-- fence (protect() creates the fence's triggers as the table's owner), and
-- makes it; the fence checks the table owner's right to the scope at the
-- write, and refuses it before anything is counted for the victim
CREATE TABLE stranger.hand (id int, tok bigint);
SELECT pg_catalog.has_function_privilege('fencing.fence_trigger()', 'EXECUTE') AS may_execute_fence;
CREATE TRIGGER hand BEFORE INSERT OR UPDATE OR DELETE ON stranger.hand
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('tok', 'error', 'scope', 'victim-scope');
INSERT INTO stranger.hand (id) VALUES (1);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO stranger.hand (id, tok) VALUES (1, 1);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- 2. the victim's own rejections count under its scope (no "not counted")
SET ROLE regress_sr_victim;
SET application_name = 'victim-app';
UPDATE victim.t SET v = 'none' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.fence_next_epoch('victim-scope', 'leader-2') AS t2 \gset
UPDATE victim.t SET v = 'stale', tok = :t1 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- 3. each error carries its table: the trigger's rejections, ZF003 raised for
-- a table write (checked before the lock, under a lock this transaction
-- already held, and deferred to the AFTER INSERT trigger of ON CONFLICT)
CREATE FUNCTION pg_temp.caught(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    state text;
    schema_name text;
    table_name text;
BEGIN
    EXECUTE sql;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, schema_name = SCHEMA_NAME,
                            table_name = TABLE_NAME;
    RETURN format('%s table %s', state,
                  CASE WHEN table_name = '' THEN 'none' ELSE schema_name || '.' || table_name END);
END
$$;
SET fencing.log_rejections = off;
SET fencing.log_skips = off;
SELECT pg_temp.caught(format('UPDATE victim.t SET tok = %s WHERE id = 1', :t1)) AS zf001;
SELECT pg_temp.caught('UPDATE victim.t SET v = $$x$$ WHERE id = 1') AS zf002;
SELECT pg_temp.caught(format('UPDATE victim.t SET tok = %s WHERE id = 1', :t2 + 100)) AS zf003;
SELECT pg_temp.caught(format('SELECT fencing.fence_next_epoch(%L); UPDATE victim.t SET tok = %s WHERE id = 1',
                             'victim-scope', :t2 + 100)) AS zf003_under_lock;
SELECT pg_temp.caught(format('INSERT INTO victim.t VALUES (2, $$new$$, %s) ON CONFLICT (id) DO NOTHING',
                             :t2 + 100)) AS zf003_on_conflict;
SELECT pg_temp.caught(format('SELECT fencing.use_token(%L, %s); UPDATE victim.t SET tok = %s WHERE id = 1',
                             'victim-scope', :t2, :t2 + 1)) AS zf005;
SELECT pg_temp.caught(format('SELECT fencing.use_token(%L, %s); TRUNCATE victim.t',
                             'victim-scope', :t1)) AS zf001_truncate;

-- 4. takeover() names no table, even right after a write to one (1.3 blamed
-- the table the session wrote last); its ZF001 and ZF003 are counted (under
-- the scope: the caller holds "write") and logged with no relation
SELECT pg_temp.caught(format('UPDATE victim.t SET tok = %s WHERE id = 1', :t1)) AS before_takeover;
SELECT pg_temp.caught(format('SELECT fencing.takeover(%L, %s)', 'victim-scope', :t2 + 100)) AS takeover_zf003;
SELECT pg_temp.caught(format('SELECT fencing.takeover(%L, %s)', 'victim-scope', :t1)) AS takeover_zf001;
SET fencing.log_rejections = notice;
SET application_name = 'admin';
SET ROLE regress_sr_admin;
SELECT fencing.takeover('victim-scope', :t2 + 100);
SELECT fencing.takeover('victim-scope', :t1);
-- a caller without "write" is refused before anything is counted or logged
SET ROLE regress_sr_stranger;
SELECT fencing.takeover('victim-scope', :t1);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- ZF004 is raised by the same module, with its scope and no table
SELECT fencing.create_scope('full', tokens => 'external');
SELECT fencing.takeover('full', 9223372036854775807);
SELECT pg_temp.caught('SELECT fencing.fence_next_epoch($$full$$)') AS zf004;

-- 5. nothing of this reached the victim's scope row or its terms
SELECT mark = :t2 AS mark_is_t2, epoch = :t2 AS latest_is_t2 FROM fencing.scopes WHERE scope = 'victim-scope';
SELECT count(*) AS junk_scopes FROM fencing.scopes WHERE scope LIKE 'junk%';

RESET fencing.log_rejections;
RESET fencing.log_skips;
\c :regress_db
DROP DATABASE fencing_stats_rights;
DROP ROLE regress_sr_victim, regress_sr_stranger, regress_sr_admin;
