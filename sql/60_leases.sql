-- 60_leases: acquire, renew and release a lease; every outcome and error.
-- Expiry is judged by the server's clock: short TTLs and pg_sleep() below.
\set SHOW_CONTEXT never

-- a free lease is granted with a new term, which is also the scope's mark
SELECT granted, term AS t1, lease_holder, expires_at > clock_timestamp() AS live
  FROM fencing.acquire_lease('singleton', 'worker-A', '1 hour') \gset
SELECT :'granted' AS granted, :'lease_holder' AS lease_holder, :'live' AS live;
SELECT mark = :t1 AS mark_is_term, holder FROM fencing.scopes WHERE scope = 'singleton';

-- someone else's live lease: not granted, no wait, no error; says who and until when
SELECT granted, term = :t1 AS same_term, lease_holder,
       expires_at > clock_timestamp() + interval '50 minutes' AS until_later
  FROM fencing.acquire_lease('singleton', 'worker-B', '1 hour');
SELECT mark = :t1 AS mark_unchanged FROM fencing.scopes WHERE scope = 'singleton';

-- the holder asking again keeps its term (no second term) and extends the lease
SELECT granted, term = :t1 AS same_term, lease_holder
  FROM fencing.acquire_lease('singleton', 'worker-A', '2 hours');
SELECT count(*) AS terms_for_scope FROM fencing.terms WHERE scope = 'singleton';

-- renew: only the current holder and term
SELECT renewed, expires_at > clock_timestamp() AS live, lease_holder, lease_term = :t1 AS same_term
  FROM fencing.renew_lease('singleton', 'worker-A', :t1, '1 hour');
SELECT renewed, expires_at, lease_holder, lease_term = :t1 AS current_term
  FROM fencing.renew_lease('singleton', 'worker-B', :t1, '1 hour');
SELECT renewed, expires_at, lease_holder FROM fencing.renew_lease('singleton', 'worker-A', :t1 - 1, '1 hour');

-- release: only the current holder and term; then a new term at once
SELECT fencing.release_lease('singleton', 'worker-B', :t1) AS released_by_other;
SELECT fencing.release_lease('singleton', 'worker-A', :t1 - 1) AS released_old_term;
SELECT fencing.release_lease('singleton', 'worker-A', :t1) AS released;
SELECT fencing.release_lease('singleton', 'worker-A', :t1) AS released_twice;
SELECT renewed FROM fencing.renew_lease('singleton', 'worker-A', :t1, '1 hour');
SELECT granted, term AS t2, lease_holder FROM fencing.acquire_lease('singleton', 'worker-B', '1 hour') \gset
SELECT :'granted' AS granted, :t2 > :t1 AS new_term, :'lease_holder' AS lease_holder;

-- expiry: an expired lease is never revived by a renew, even if nobody took it
SELECT granted, term AS t3 FROM fencing.acquire_lease('short', 'worker-A', '20 milliseconds') \gset
SELECT pg_sleep(0.1);
SELECT renewed, lease_holder FROM fencing.renew_lease('short', 'worker-A', :t3, '1 hour');
SELECT live FROM fencing.lease_status WHERE scope = 'short';
-- the holder must acquire again, and gets a new term
SELECT granted, term > :t3 AS new_term FROM fencing.acquire_lease('short', 'worker-A', '1 hour');
-- a takeover of an expired lease: the old holder is fenced
SELECT granted, term AS t4 FROM fencing.acquire_lease('short2', 'worker-A', '20 milliseconds') \gset
CREATE TABLE lease_jobs (id int PRIMARY KEY, tok bigint);
SELECT fencing.protect('lease_jobs', 'tok', scope => 'short2');
INSERT INTO lease_jobs VALUES (1, :t4);
SELECT pg_sleep(0.1);
SELECT granted, term AS t5, lease_holder FROM fencing.acquire_lease('short2', 'worker-B', '1 hour') \gset
SELECT :'granted' AS granted, :t5 > :t4 AS new_term, :'lease_holder' AS lease_holder;
UPDATE lease_jobs SET tok = :t4 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE lease_jobs SET tok = :t5 WHERE id = 1;

-- one place to see every lease
SELECT scope, holder, term IS NOT NULL AS has_term, acquired_at <= expires_at AS ordered,
       live, takeovers, mark = term AS mark_is_term
  FROM fencing.lease_status ORDER BY scope COLLATE "C";

-- bad input
SELECT * FROM fencing.acquire_lease(NULL, 'w', '1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.acquire_lease('', 'w', '1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.acquire_lease(repeat('s', 201), 'w', '1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.acquire_lease('s', NULL, '1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.acquire_lease('s', '', '1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.acquire_lease('s', repeat('w', 201), '1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.acquire_lease('s', 'w', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.acquire_lease('s', 'w', '0 seconds');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.acquire_lease('s', 'w', '-5 seconds');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.acquire_lease('s', 'w', '2 days');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.acquire_lease('s', 'w', '1 month');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.renew_lease('singleton', 'worker-B', NULL, '1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.renew_lease('singleton', 'worker-B', :t2, '0 seconds');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.release_lease('singleton', NULL, :t2);
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.release_lease('singleton', 'worker-B', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS no_lease_rows_for_bad_input FROM fencing.leases WHERE scope IN ('s', '');

-- ordinary roles call the lease functions but cannot write the table
CREATE ROLE lease_app;
GRANT EXECUTE ON FUNCTION fencing.create_scope(text, text, regrole) TO lease_app;
SET ROLE lease_app;
SELECT granted FROM fencing.acquire_lease('app-scope', 'app-1', '1 minute');
SELECT issued_by FROM fencing.terms WHERE scope = 'app-scope';
UPDATE fencing.leases SET expires_at = 'infinity';
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
REVOKE EXECUTE ON FUNCTION fencing.create_scope(text, text, regrole) FROM lease_app;
DROP ROLE lease_app;
DROP TABLE lease_jobs;
