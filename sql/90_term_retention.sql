-- 90_term_retention: fencing.term_retention deletes a scope's expired terms
-- as the scope is issued new ones, a bounded number per term (4), without
-- anyone calling prune_terms(); the latest term, the mark and the lease's
-- term are kept; off (-1) by default; only a superuser sets it, and it
-- applies to any role's terms.  What monitoring reads of a scope's terms
-- is a range of the index on (scope, issued_at).
\set SHOW_CONTEXT never
CREATE ROLE regress_ret_tenant;
SELECT fencing.create_scope('regress-ret', 'issued');
SELECT fencing.create_scope('regress-ret-tenant', 'issued', 'regress_ret_tenant');
SELECT fencing.create_scope('regress-ret-lease', 'issued');
-- off by default
SHOW fencing.term_retention;

-- twelve terms, ten of them issued 10 days ago
CREATE FUNCTION pg_temp.issue(s text, n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. n LOOP PERFORM fencing.fence_next_epoch(s); END LOOP;
END $$;
CREATE FUNCTION pg_temp.age(s text, n int) RETURNS void LANGUAGE sql AS $$
  UPDATE fencing.terms SET issued_at = issued_at - '10 days'::interval
   WHERE scope = s
     AND epoch IN (SELECT epoch FROM fencing.terms WHERE scope = s ORDER BY epoch LIMIT n)
$$;
CREATE FUNCTION pg_temp.history(s text, OUT terms bigint, OUT expired bigint, OUT latest_kept boolean)
LANGUAGE sql AS $$
  SELECT count(*),
         count(*) FILTER (WHERE t.issued_at < now() - '1 day'::interval),
         bool_or(t.epoch = sc.epoch AND t.epoch = sc.mark)
    FROM fencing.terms t JOIN fencing.scopes sc USING (scope)
   WHERE t.scope = s
$$;
SELECT pg_temp.issue('regress-ret', 12);
SELECT pg_temp.age('regress-ret', 10);
SELECT * FROM pg_temp.history('regress-ret');

-- off: a new term deletes nothing
SELECT pg_temp.issue('regress-ret', 1);
SELECT * FROM pg_temp.history('regress-ret');

-- one day: each term issued deletes at most 4 expired terms
SET fencing.term_retention = '1d';
SHOW fencing.term_retention;
SELECT pg_temp.issue('regress-ret', 1);
SELECT * FROM pg_temp.history('regress-ret');
SELECT pg_temp.issue('regress-ret', 1);
SELECT * FROM pg_temp.history('regress-ret');
SELECT pg_temp.issue('regress-ret', 1);
SELECT * FROM pg_temp.history('regress-ret');

-- 0: only the latest term (the mark) and the lease's term stay
SELECT (fencing.acquire_lease('regress-ret-lease', 'worker-A', '1 hour')).term AS lease_term \gset
SELECT pg_temp.issue('regress-ret-lease', 3);
SET fencing.term_retention = 0;
SELECT pg_temp.issue('regress-ret-lease', 1);
SELECT t.epoch = :lease_term AS is_lease_term, t.epoch = s.mark AS is_mark
  FROM fencing.terms t JOIN fencing.scopes s USING (scope)
 WHERE t.scope = 'regress-ret-lease' ORDER BY t.epoch;
SELECT lease_term = :lease_term AS lease_unchanged FROM fencing.scope_stats WHERE scope = 'regress-ret-lease';
RESET fencing.term_retention;

-- only a superuser sets it
SET ROLE regress_ret_tenant;
SET fencing.term_retention = '1d';
\echo :SQLSTATE
SELECT pg_catalog.set_config('fencing.term_retention', '0', true);
\echo :SQLSTATE
RESET ROLE;

-- set by the administrator (here for the session), it applies to the
-- terms a tenant issues: no superuser calls anything
SET ROLE regress_ret_tenant;
SELECT pg_temp.issue('regress-ret-tenant', 6);
RESET ROLE;
SELECT pg_temp.age('regress-ret-tenant', 5);
SET fencing.term_retention = '1h';
SET ROLE regress_ret_tenant;
SELECT pg_temp.issue('regress-ret-tenant', 1);
RESET ROLE;
RESET fencing.term_retention;
SELECT * FROM pg_temp.history('regress-ret-tenant');

-- the next term never depends on the terms kept (I1)
SET fencing.term_retention = 0;
SELECT mark AS mark_before FROM fencing.scopes WHERE scope = 'regress-ret' \gset
SELECT fencing.fence_next_epoch('regress-ret') > :mark_before AS next_is_higher;
RESET fencing.term_retention;

-- terms_last_hour reads the scope's range of the index
SELECT indexdef FROM pg_catalog.pg_indexes
 WHERE schemaname = 'fencing' AND indexname = 'terms_scope_issued_at';
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT pg_catalog.count(*) FROM fencing.terms t
 WHERE t.scope OPERATOR(pg_catalog.=) 'regress-ret'
   AND t.issued_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::pg_catalog.interval);
RESET enable_seqscan;
SELECT scope, terms_last_hour FROM fencing.scope_stats
 WHERE scope LIKE 'regress-ret%' ORDER BY scope;

-- clean up: prune_terms deletes what is left but the latest
SELECT fencing.prune_terms('0', 1) >= 0 AS pruned;
SELECT fencing.alter_scope_owner('regress-ret-tenant', current_user::regrole);
DROP ROLE regress_ret_tenant;
