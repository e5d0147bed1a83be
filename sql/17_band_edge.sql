-- 17_band_edge: the clock issues no term at or above the band's limit
-- (src/clock/epoch_clock.c).  The band of timeline T ends where the band of
-- T + 1 begins (term_limit): a term at or above it could be issued again by
-- the next timeline after an asynchronous failover.  A scope whose next term
-- would be term_limit or more (its mark or latest term is term_limit - 1 or
-- more) gets none (ZF007), from fence_next_epoch() and from a lease grant,
-- and nothing changes; the shared sequence too; fencing.health reports both.
-- Its own database: the terms it takes do not shift the other files' numbers.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
CREATE DATABASE fencing_band_edge;
\c fencing_band_edge
SET client_min_messages = error;
CREATE EXTENSION fencing;
RESET client_min_messages;
-- timeline 1, generation 0: terms 0 to 2^40 - 1
SELECT timeline, term_floor, term_limit FROM fencing.clock_timeline();
SELECT term_limit AS lim FROM fencing.clock_timeline() \gset

-- a mark at term_limit - 2 (its owner may set any mark) issues
-- term_limit - 1, the band's last term
SELECT fencing.create_scope('below-edge');
SELECT fencing.reset_mark('below-edge', :lim - 2);
SELECT fencing.fence_next_epoch('below-edge') - :lim AS last_term_minus_limit;
-- and then none: its next term would be term_limit
SELECT fencing.fence_next_epoch('below-edge');
\echo :LAST_ERROR_SQLSTATE

-- the edge: a mark at term_limit - 1 issues nothing (its next term would be
-- term_limit, the next timeline's floor), and nothing changes: no mark, no
-- term, no row of fencing.terms, the sequence not moved
SELECT fencing.create_scope('at-edge');
SELECT fencing.reset_mark('at-edge', :lim - 1);
SELECT last_value AS seq_before FROM fencing.epoch_seq \gset
SELECT fencing.fence_next_epoch('at-edge');
\echo :LAST_ERROR_SQLSTATE
SELECT scope, mark - :lim AS mark_minus_limit, epoch FROM fencing.scopes WHERE scope = 'at-edge';
SELECT count(*) AS at_edge_terms FROM fencing.terms WHERE scope = 'at-edge';
SELECT last_value = :seq_before AS sequence_unmoved, last_value < :lim - 1 AS sequence_in_band
  FROM fencing.epoch_seq;
-- a lease grant issues a term: refused the same way, no lease
SELECT * FROM fencing.acquire_lease('at-edge', 'worker-1', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS at_edge_leases FROM fencing.leases WHERE scope = 'at-edge';
-- a new scope is unaffected
SELECT fencing.fence_next_epoch('fresh') < :lim AS fresh_term_in_band;

-- external tokens: a takeover may push the mark anywhere (a ZooKeeper zxid
-- is above 2^40 from the lock service's 256th epoch on); no term above it
SELECT fencing.create_scope('ext-edge', tokens => 'external');
SELECT fencing.fence_next_epoch('ext-edge') AS ext_term;
SELECT fencing.takeover('ext-edge', :lim - 1) AS previous_mark;
SELECT fencing.fence_next_epoch('ext-edge');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.takeover('ext-edge', 9223372036854775806) - :lim AS previous_mark_minus_limit;
SELECT fencing.fence_next_epoch('ext-edge');
\echo :LAST_ERROR_SQLSTATE
-- the largest bigint: no term at all, whatever the band (ZF004)
SELECT fencing.takeover('ext-edge', 9223372036854775807) > 0 AS taken;
SELECT fencing.fence_next_epoch('ext-edge');
\echo :LAST_ERROR_SQLSTATE
-- an external scope that never took a term is its lock service's business:
-- not reported
SELECT fencing.create_scope('zk', tokens => 'external');
SELECT fencing.takeover('zk', 4294967296000) AS previous_mark;

-- what reports the band agrees: fencing.health (critical for an issued
-- scope, a warning for an external one that took terms), and the query of
-- docs/operations.md
SELECT severity, "check", object, detail, action FROM fencing.health
 WHERE "check" IN ('scope outside the band', 'epoch sequence outside the band')
 ORDER BY object;
SELECT s.scope
  FROM fencing.scopes s, fencing.clock_timeline() c
 WHERE greatest(s.mark, s.epoch) >= c.term_limit - 1
 ORDER BY s.scope;

-- the shared sequence: terms never come from it at or above term_limit
-- either (a superuser's setval(), or 1.1's clock, may have put it there)
SELECT pg_catalog.setval('fencing.epoch_seq', :lim - 2);
SELECT fencing.fence_next_epoch('seq-last') - :lim AS last_term_minus_limit;
SELECT fencing.fence_next_epoch('seq-next');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS seq_next_terms FROM fencing.terms WHERE scope = 'seq-next';
SELECT severity, "check", object, detail, action FROM fencing.health
 WHERE "check" = 'epoch sequence outside the band';
-- the repair the hint gives: each scope stays above its own terms
SELECT pg_catalog.setval('fencing.epoch_seq', 1);
SELECT fencing.fence_next_epoch('seq-next') < :lim AS seq_next_in_band;
SELECT count(*) AS sequence_findings FROM fencing.health
 WHERE "check" = 'epoch sequence outside the band';

-- the repairs the hints give: the owner lowers a pushed mark into the band
SELECT fencing.reset_mark('at-edge', 0) - :lim AS previous_mark_minus_limit;
SELECT fencing.fence_next_epoch('at-edge') < :lim AS at_edge_in_band;
-- a scope whose own term is the band's last: a superuser moves the clock's
-- band above every term issued (the other scopes' next terms start there too)
SELECT fencing.confirm_clock(0) > :lim AS new_floor_above;
SELECT fencing.fence_next_epoch('below-edge') > :lim AS below_edge_above_old_limit;
SELECT s.scope, s.tokens
  FROM fencing.scopes s, fencing.clock_timeline() c
 WHERE greatest(s.mark, s.epoch) >= c.term_limit - 1
 ORDER BY s.scope;
SELECT object FROM fencing.health WHERE "check" = 'scope outside the band' ORDER BY object;
\c :regress_db
DROP DATABASE fencing_band_edge;
