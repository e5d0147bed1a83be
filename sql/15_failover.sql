-- 15_failover: terms carry the timeline (issue 8): the band of the current timeline.
-- A regression cluster never failed over: timeline 1, whose band starts at
-- 0, so terms count up from the sequence as before 1.2.
-- Its own database: the term it takes does not shift the other files' numbers.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
CREATE DATABASE fencing_failover;
\c fencing_failover
SET client_min_messages = warning;
CREATE EXTENSION fencing;
RESET client_min_messages;
SELECT timeline, term_floor, term_limit, term_limit = (2::numeric ^ 40) AS limit_is_2_40
  FROM fencing.clock_timeline();
SELECT fencing.fence_next_epoch('failover-band') < 1000 AS small_term_on_timeline_1;
-- fence_older_timelines(): nothing below the floor of timeline 1 (0), so it
-- lifts no mark here (test/tap/006_async_failover.pl runs it after a real
-- promotion); bad arguments, and a superuser's function by default
SELECT mark AS band_mark FROM fencing.scopes WHERE scope = 'failover-band' \gset
SELECT fencing.fence_older_timelines() AS lifted;
SELECT mark = :band_mark AS mark_unchanged FROM fencing.scopes WHERE scope = 'failover-band';
SELECT fencing.fence_older_timelines(0);
SELECT fencing.fence_older_timelines(NULL);
BEGIN READ ONLY;
SELECT fencing.fence_older_timelines();
ROLLBACK;
CREATE ROLE regress_failover_app;
SET ROLE regress_failover_app;
SELECT fencing.fence_older_timelines();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE regress_failover_app;
SELECT count(*) AS promotion_findings FROM fencing.health
 WHERE "check" = 'scope not fenced since the promotion';
\c :regress_db
DROP DATABASE fencing_failover;
