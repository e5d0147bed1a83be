-- 16_clock: the clock's generation (src/clock/clock_generation.c).  The
-- row of fencing.clock names who claimed the clock; a term issued by any
-- other server, database or clock table, or on a lower timeline, moves the
-- generation above every band used; confirm_clock() and its errors; the
-- update from 1.4 claims the clock in place.  Its own databases: the terms
-- it takes do not shift the other files' numbers.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
CREATE DATABASE fencing_clock;
\c fencing_clock
SET client_min_messages = warning;
CREATE EXTENSION fencing;
RESET client_min_messages;
-- a fresh install: no row until the first term, generation 0
SELECT state, timeline, generation, band_offset, term_floor, term_limit,
       claimed_timeline, reason FROM fencing.clock_state();
SELECT count(*) AS clock_rows FROM fencing.clock;
SELECT fencing.fence_next_epoch('c1') AS first_term;
SELECT state, generation, term_floor, claimed_timeline, reason,
       claimed_system_identifier = system_identifier AS this_system FROM fencing.clock_state();
SELECT generation, band_offset,
       system_identifier = (SELECT system_identifier FROM pg_control_system()) AS this_system,
       database_oid = (SELECT oid FROM pg_database WHERE datname = current_database()) AS this_database,
       clock_oid = 'fencing.clock'::regclass AS this_table, timeline, reason,
       confirmed_start IS NULL AS not_confirmed
  FROM fencing.clock;
-- a move's band: its generation, and its floor later than the generation's
-- start by the microseconds since the claim it moved from (under an hour
-- here; 1 when it is later at all): 2^40 = 1099511627776
\set band 1099511627776
\set shift_ok 'BETWEEN 1 AND 3600e6'
-- with no claim to count from: the microseconds since 2000-01-01 (the start
-- of the timestamps), read after the term
\set since_2000 '(EXTRACT(epoch FROM pg_catalog.clock_timestamp() - timestamptz ''2000-01-01 00:00:00+00'') * 1e6)::bigint'
-- the fast path: the next terms leave the row alone
SELECT claimed_at AS claimed_1 FROM fencing.clock \gset
SELECT fencing.fence_next_epoch('c1') AS second_term;
SELECT claimed_at = :'claimed_1' AS row_unchanged FROM fencing.clock;

-- a copy of the database (CREATE DATABASE ... TEMPLATE, like a restore into
-- a new database) is another database: its first term moves the generation
-- above every band used (band 0 of timeline 1: generation 1) and the 16
-- timelines the source may have gone on to since (generation 17), later by
-- the time since the claim
\c :regress_db
CREATE DATABASE fencing_clock_copy TEMPLATE fencing_clock;
\c fencing_clock_copy
SELECT state, generation, term_floor - generation * :band :shift_ok AS shifted
  FROM fencing.clock_state();
SELECT fencing.fence_next_epoch('c1') AS copy_term \gset
SELECT state, generation, reason, term_floor = :copy_term AS term_at_the_floor,
       band_offset :shift_ok AS shifted
  FROM fencing.clock_state();
-- the band and the floor: clock_timeline() says the same
SELECT timeline, term_floor = :copy_term AS same_floor, term_limit = :copy_term + :band AS same_limit
  FROM fencing.clock_timeline();

-- claimed by another system (as after pg_upgrade or a restore into a new
-- cluster; the claims changed by hand here).  Every claim is a row, the
-- latest in force: generation max(17 + 1 + 1 (its band is shifted), band
-- 17 + 1) + 16 = 35
UPDATE fencing.clock SET system_identifier = system_identifier OPERATOR(pg_catalog.+) 1;
SELECT state, generation, band_offset :shift_ok AS shifted FROM fencing.clock_state();
SELECT fencing.fence_next_epoch('c2') AS moved_term \gset
SELECT :moved_term = term_floor AS term_at_the_floor FROM fencing.clock_state();
SELECT generation, reason FROM fencing.clock ORDER BY generation;
-- claimed on a higher timeline than this server's: generation 35 + 5 + 1 +
-- 16 = 57
UPDATE fencing.clock SET timeline = 5;
SELECT state, generation FROM fencing.clock_state();
SELECT fencing.fence_next_epoch('c2') AS lower_timeline_term \gset
SELECT :lower_timeline_term = term_floor AS term_at_the_floor, generation FROM fencing.clock_state();
SELECT generation, timeline, reason FROM fencing.clock ORDER BY generation;
-- the terms of the earlier bands are fenced by fence_older_timelines()
SELECT fencing.fence_older_timelines() AS lifted;
SELECT scope, mark = :lower_timeline_term AS at_the_floor FROM fencing.scopes ORDER BY scope;

-- no claim but terms known (the rows deleted by hand): above them and 16
-- more (band 57 + 1 + 16 = 74), later by the time since the start of the
-- timestamps, as confirm_clock() counts it with no row (so that two moves
-- from such data are ordered too: below)
DELETE FROM fencing.clock;
SELECT state, 74 * :band + :since_2000 - term_floor BETWEEN 0 AND 3600e6 AS shifted_from_74
  FROM fencing.clock_state();
SELECT fencing.fence_next_epoch('c3') AS unclaimed_term \gset
SELECT 74 * :band + :since_2000 - :unclaimed_term BETWEEN 0 AND 3600e6 AS unclaimed_term_shifted_from_74;
SELECT generation AS unclaimed_generation, reason FROM fencing.clock \gset
SELECT :unclaimed_generation > 74 + 700 AS above_74_by_years, :'reason' AS reason,
       :unclaimed_term = term_floor AS term_at_the_floor FROM fencing.clock_state();

-- confirm_clock(): a superuser's, lost_timelines 0 to 1024, writes
SELECT fencing.confirm_clock(NULL);
SELECT fencing.confirm_clock(-1);
SELECT fencing.confirm_clock(1025);
BEGIN READ ONLY;
SELECT fencing.confirm_clock();
ROLLBACK;
CREATE ROLE regress_clock_app;
SET ROLE regress_clock_app;
SELECT fencing.confirm_clock();
\echo :LAST_ERROR_SQLSTATE
SELECT state FROM fencing.clock_state();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT EXECUTE ON FUNCTION fencing.confirm_clock(integer) TO regress_clock_app;
SET ROLE regress_clock_app;
SELECT fencing.confirm_clock();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
REVOKE EXECUTE ON FUNCTION fencing.confirm_clock(integer) FROM regress_clock_app;
DROP ROLE regress_clock_app;
-- above the bands the row reached (its band and the next, its band being
-- shifted) and lost_timelines more (0 here), plus the microseconds since the
-- row was claimed: a move is a confirmation with lost_timelines 16
SELECT fencing.confirm_clock(0) AS confirmed_floor \gset
SELECT :confirmed_floor - (:unclaimed_generation + 2) * :band :shift_ok AS by_the_time_since_the_claim;
SELECT state, term_floor = :confirmed_floor AS at_the_floor, reason FROM fencing.clock_state();
SELECT generation - :unclaimed_generation AS generation_above_unclaimed,
       band_offset > 0 AS shifted, confirmed_start IS NOT NULL AS confirmed, reason
  FROM fencing.clock ORDER BY generation;
SELECT generation AS confirmed_generation FROM fencing.clock WHERE reason = 'confirmed' \gset
SELECT fencing.fence_next_epoch('c4') = :confirmed_floor AS first_term_at_the_floor;
SELECT fencing.fence_next_epoch('c4') = :confirmed_floor + 1 AS next_term_above;
-- a claim after a confirmation moves above the bands its shifted band
-- reaches into (its own and the next), and 16 more
UPDATE fencing.clock SET system_identifier = system_identifier OPERATOR(pg_catalog.+) 1;
SELECT fencing.fence_next_epoch('c1') - (:confirmed_generation + 18) * :band :shift_ok AS moved_after_confirmation;
SELECT generation - :unclaimed_generation AS generation_above_unclaimed,
       band_offset > 0 AS shifted, reason FROM fencing.clock ORDER BY generation;
-- the regression server started cleanly: no clock finding
SELECT count(*) AS clock_findings FROM fencing.health
 WHERE "check" = 'clock not confirmed since an unclean start';

-- 1.4 updated in place: this server claims the clock, generation 0
\c :regress_db
CREATE DATABASE fencing_clock_14;
\c fencing_clock_14
SET client_min_messages = warning;
CREATE EXTENSION fencing VERSION '1.4';
RESET client_min_messages;
SELECT fencing.fence_next_epoch('old') AS term_on_1_4;
SELECT term_floor FROM fencing.clock_timeline();
ALTER EXTENSION fencing UPDATE;
SELECT state, generation, reason FROM fencing.clock_state();
SELECT fencing.fence_next_epoch('old') AS term_after_update;
-- 1.4 with a term above this timeline's band (moved here from a promoted
-- cluster by pg_upgrade or a restore): no row, the first term moves
\c :regress_db
CREATE DATABASE fencing_clock_14_moved;
\c fencing_clock_14_moved
SET client_min_messages = warning;
CREATE EXTENSION fencing VERSION '1.4';
RESET client_min_messages;
SELECT fencing.fence_next_epoch('moved') AS term_on_1_4;
-- the term a server of timeline 2 issued
UPDATE fencing.scopes SET epoch = 1099511627800, mark = 1099511627800 WHERE scope = 'moved';
ALTER EXTENSION fencing UPDATE;
SELECT count(*) AS clock_rows FROM fencing.clock;
-- a copy made before its first term (a dump of a hot standby that lagged
-- its move; a copy by template here) moves from the same data
\c :regress_db
CREATE DATABASE fencing_clock_14_moved_copy TEMPLATE fencing_clock_14_moved;
\c fencing_clock_14_moved
-- above its band (1 + 1) and 16 more, later by the time since the start of
-- the timestamps: no row to count from
SELECT state, 18 * :band + :since_2000 - term_floor BETWEEN 0 AND 3600e6 AS shifted_from_18
  FROM fencing.clock_state();
SELECT fencing.fence_next_epoch('moved') AS moved_term \gset
SELECT 18 * :band + :since_2000 - :moved_term BETWEEN 0 AND 3600e6 AS moved_term_shifted_from_18;
SELECT reason FROM fencing.clock;
SELECT pg_catalog.pg_sleep(0.01);
-- the copy's first terms are above the original's (they were the same
-- before: neither move counted any time)
\c fencing_clock_14_moved_copy
SELECT fencing.fence_next_epoch('moved') - :moved_term :shift_ok AS copy_above_original,
       fencing.fence_next_epoch('new') - :moved_term :shift_ok AS copy_new_scope_above;

\c :regress_db
-- a scope of external tokens at the top of the range (any role that may
-- create scopes can push one there with takeover()) does not move the clock
-- of a copy past every band: its tokens are not the clock's
CREATE DATABASE fencing_clock_ext;
\c fencing_clock_ext
SET client_min_messages = error;
CREATE EXTENSION fencing;
RESET client_min_messages;
SELECT fencing.fence_next_epoch('plain') AS plain_term;
SELECT fencing.create_scope('ext', tokens => 'external');
SELECT fencing.takeover('ext', 9223372036854775806);
-- no term up there: it is outside the band (17_band_edge)
SELECT fencing.fence_next_epoch('ext') AS ext_term;
-- before 1.5 it issued 2^63 - 1: a latest term of an external scope (set by
-- hand here) is not the clock's either
UPDATE fencing.scopes SET epoch = 9223372036854775807 WHERE scope = 'ext';
\c :regress_db
CREATE DATABASE fencing_clock_ext_copy TEMPLATE fencing_clock_ext;
\c fencing_clock_ext_copy
-- generation 1 + 16, the band of plain's term not beyond it
SELECT fencing.fence_next_epoch('plain') - 17 * :band :shift_ok AS term_after_copy;
SELECT generation FROM fencing.clock_state();
-- fence_older_timelines() on a clock that moves claims the move, whose
-- floor would otherwise be later at every call: it lifts once, then nothing
UPDATE fencing.clock SET system_identifier = system_identifier OPERATOR(pg_catalog.+) 1;
-- fencing.health says why the scope is not fenced: a move, not a promotion
SELECT severity, "check", detail LIKE '%moves to (restored, upgraded or copied%' AS says_move
  FROM fencing.health WHERE object = 'plain';
SELECT fencing.fence_older_timelines() AS lifted;
SELECT state, reason FROM fencing.clock_state();
SELECT fencing.fence_older_timelines() AS lifted_again;
SELECT s.mark = c.term_floor AS lifted_to_the_floor
  FROM fencing.scopes AS s, fencing.clock_state() AS c WHERE s.scope = 'plain';
SELECT fencing.fence_next_epoch('plain') - term_floor AS next_term_above_the_floor
  FROM fencing.clock_state();
-- a claim at -infinity (only by hand): no band to move to, nothing written
UPDATE fencing.clock SET claimed_at = '-infinity',
       system_identifier = system_identifier OPERATOR(pg_catalog.+) 1;
SELECT count(*) AS claims_before FROM fencing.clock;
SELECT fencing.fence_next_epoch('plain') AS no_term;
SELECT count(*) AS claims_after FROM fencing.clock;
-- shown, not refused: clock_state(), clock_timeline() and so fencing.health
-- say there is no band (they failed with ZF004, fencing.health with them)
SELECT state, term_floor IS NULL AS no_floor, term_limit IS NULL AS no_limit
  FROM fencing.clock_state();
SELECT timeline, term_floor IS NULL AS no_floor FROM fencing.clock_timeline();
SELECT count(*) AS band_findings FROM fencing.health WHERE object = 'plain';
-- a generation past the last band (by hand) claimed by another server: no
-- band (ZF004), nothing written; the sum no longer wraps around to a low
-- band, claimed by every term while the row stays in force
UPDATE fencing.clock SET claimed_at = pg_catalog.now(), generation = 9223372036854775807;
SELECT fencing.fence_next_epoch('plain') AS no_term;
SELECT state, term_floor IS NULL AS no_floor FROM fencing.clock_state();
SELECT count(*) AS claims_after FROM fencing.clock;
\c :regress_db
DROP DATABASE fencing_clock_ext;
DROP DATABASE fencing_clock_ext_copy;
DROP DATABASE fencing_clock;
DROP DATABASE fencing_clock_copy;
DROP DATABASE fencing_clock_14;
DROP DATABASE fencing_clock_14_moved;
DROP DATABASE fencing_clock_14_moved_copy;
