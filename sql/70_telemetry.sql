-- 70_telemetry: statistics views, log lines, stats_reset and prune_terms
-- WITHOUT shared_preload_libraries (pg_regress does not preload): the views
-- show what the tables say with null counters and one NOTICE per session,
-- stats_reset fails clearly, every rejection and skip is still logged.
-- The counters themselves are tested preloaded by test/tap/007_telemetry.pl.
-- Its own database: the terms it takes do not shift the other files' numbers.
\set SHOW_CONTEXT never
\set VERBOSITY default
SELECT current_database() AS regress_db \gset
CREATE DATABASE fencing_telemetry;
\c fencing_telemetry
SET client_min_messages = warning;
CREATE EXTENSION fencing;
RESET client_min_messages;
CREATE ROLE regress_tele_app;
CREATE ROLE regress_tele_monitor IN ROLE pg_monitor;
CREATE ROLE regress_tele_nobody;

CREATE TABLE t (id int PRIMARY KEY, v text, tok bigint);
SELECT fencing.protect('t', 'tok', scope => 'tele');
CREATE TABLE sk (id int PRIMARY KEY, v text, tok bigint);
SELECT fencing.protect('sk', 'tok', scope => 'tele', on_stale => 'skip');
GRANT ALL ON t, sk TO regress_tele_app;
SELECT fencing.fence_next_epoch('tele', 'leader-1') AS t1 \gset
SELECT fencing.grant_scope('tele', 'write', 'regress_tele_app');
INSERT INTO t VALUES (1, 'one', :t1);
INSERT INTO sk VALUES (1, 'one', :t1), (2, 'two', :t1);
SELECT fencing.fence_next_epoch('tele', 'leader-2') AS t2 \gset

-- 1. log lines: one per rejection and per skipped row, with the SQLSTATE,
-- scope, table, token, mark, role, application and client; at the level of
-- fencing.log_rejections / fencing.log_skips (notice here, so we see them)
SHOW fencing.log_rejections;
SHOW fencing.log_skips;
SET fencing.log_rejections = notice;
SET fencing.log_skips = notice;
SET application_name = 'worker-A';
SET ROLE regress_tele_app;
-- ZF001
UPDATE t SET v = 'stale', tok = :t1 WHERE id = 1;
-- ZF002
UPDATE t SET v = 'none' WHERE id = 1;
-- ZF003: a token never issued for the scope
UPDATE t SET v = 'forged', tok = :t2 + 100 WHERE id = 1;
-- ZF005: the column disagrees with the declared token
BEGIN;
SELECT fencing.use_token('tele', :t2);
UPDATE t SET v = 'conflict', tok = :t2 + 50 WHERE id = 1;
ROLLBACK;
-- two rows skipped under policy skip: two lines
UPDATE sk SET v = 'stale', tok = :t1;
SELECT id, v FROM sk ORDER BY id;
-- the current term: accepted, nothing logged
UPDATE t SET v = 'current', tok = :t2 WHERE id = 1;
RESET ROLE;
-- off: nothing logged (the error itself still comes)
SET fencing.log_rejections = off;
UPDATE t SET v = 'stale', tok = :t1 WHERE id = 1;
SET fencing.log_rejections = 'log';
-- only superusers (or roles granted SET) change the levels
SET ROLE regress_tele_app;
SET fencing.log_rejections = off;
RESET ROLE;
SET fencing.log_skips = 'verbose';

-- 2. the views without preload: marks, terms, leases from the tables,
-- counters null, a NOTICE once per session
SELECT enabled, entries, max_entries, untracked FROM fencing.stats_info();
SELECT scope, mark = :t2 AS mark_is_t2, latest_term = :t2 AS latest_is_t2, latest_term_holder,
       lease_live, rejected_stale, rejected_missing, skipped, bypassed, terms_issued,
       lease_renewals_refused, terms_last_hour, flapping, last_rejection_at
  FROM fencing.scope_stats;
SELECT relation, scope, on_stale, enabled, rejected_stale, skipped, bypassed
  FROM fencing.table_stats ORDER BY relation::text COLLATE "C";
SELECT count(*) FROM fencing.last_rejections;
-- stats_reset needs shared memory
SELECT fencing.stats_reset();

-- 3. flapping: more terms in the last hour than fencing.flapping_terms_per_hour
SHOW fencing.flapping_terms_per_hour;
SET fencing.flapping_terms_per_hour = 3;
SELECT fencing.fence_next_epoch('flap') FROM generate_series(1, 4) \g /dev/null
SELECT scope, terms_last_hour, flapping FROM fencing.scope_stats ORDER BY scope COLLATE "C";
SET fencing.flapping_terms_per_hour = 4;
SELECT scope, terms_last_hour, flapping FROM fencing.scope_stats WHERE scope = 'flap';
RESET fencing.flapping_terms_per_hour;

-- a live lease whose term is below the mark: its holder is fenced
SELECT granted FROM fencing.acquire_lease('leased', 'h1', '1 hour');
SELECT lease_holder, lease_live, lease_fenced FROM fencing.scope_stats WHERE scope = 'leased';
SELECT fencing.fence_next_epoch('leased', 'usurper') > 0 AS raised;
SELECT lease_holder, lease_live, lease_fenced FROM fencing.scope_stats WHERE scope = 'leased';

-- 4. who may read and reset: pg_monitor reads (every scope), others nothing
SET ROLE regress_tele_monitor;
SELECT scope, flapping FROM fencing.scope_stats ORDER BY scope COLLATE "C";
SELECT relation FROM fencing.table_stats ORDER BY relation::text COLLATE "C";
SELECT count(*) FROM fencing.last_rejections;
SELECT fencing.stats_reset();
SELECT fencing.prune_terms();
RESET ROLE;
SET ROLE regress_tele_nobody;
SELECT * FROM fencing.scope_stats;
SELECT * FROM fencing.table_stats;
SELECT * FROM fencing.last_rejections;
SELECT * FROM fencing.scope_counters();
RESET ROLE;

-- 5. retention: prune_terms keeps the latest term of each scope, every term
-- at or above its mark, each lease's term, the newest keep_per_scope
SELECT fencing.prune_terms(keep_per_scope => 0);
SELECT fencing.prune_terms(older_than => '-1 day');
SELECT fencing.prune_terms(NULL);
SELECT scope, count(*) AS terms FROM fencing.terms GROUP BY scope ORDER BY scope COLLATE "C";
-- nothing is 90 days old
SELECT fencing.prune_terms();
-- 'flap' issued 4 terms: keep 2
SELECT fencing.prune_terms('0', 2);
SELECT scope, array_agg(epoch ORDER BY epoch) AS kept FROM fencing.terms GROUP BY scope ORDER BY scope COLLATE "C";
-- 'leased': the lease's term (below the mark) is kept, as is the latest
SELECT l.term = ANY (array_agg(t.epoch)) AS lease_term_kept
  FROM fencing.leases l JOIN fencing.terms t USING (scope) WHERE scope = 'leased' GROUP BY l.term;
-- keep 1: only the latest term of each scope, and the lease's
SELECT fencing.prune_terms('0', 1);
SELECT scope, count(*) AS terms FROM fencing.terms GROUP BY scope ORDER BY scope COLLATE "C";
-- the clock does not go back: the next term is above every term ever issued
SELECT max(epoch) AS before_next FROM fencing.terms WHERE scope = 'flap' \gset
SELECT fencing.fence_next_epoch('flap') > :before_next AS above_latest;
-- a lowered mark: the terms above it are kept, and still admitted (not ZF003)
SELECT fencing.fence_next_epoch('tele', 'leader-3') AS t3 \gset
SELECT fencing.reset_mark('tele', :t1) = :t3 AS was_t3;
SELECT fencing.prune_terms('0', 1);
SELECT epoch = :t2 AS is_t2 FROM fencing.terms WHERE scope = 'tele' AND epoch < :t3;
UPDATE t SET v = 'after reset', tok = :t2 WHERE id = 1;
SELECT mark = :t2 AS mark_is_t2 FROM fencing.scopes WHERE scope = 'tele';
-- only the owner of fencing.terms (or a superuser) prunes
GRANT EXECUTE ON FUNCTION fencing.prune_terms(interval, integer) TO regress_tele_app;
SET ROLE regress_tele_app;
SELECT fencing.prune_terms('0', 1);
RESET ROLE;

\c :regress_db
DROP DATABASE fencing_telemetry;
DROP ROLE regress_tele_app, regress_tele_monitor, regress_tele_nobody;
