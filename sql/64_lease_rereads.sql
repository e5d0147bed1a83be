-- 64_lease_rereads: the lease functions called again and again by one
-- backend, which reads each lease's row and its scope's row where it last
-- saw them (state/direct_row.c), and keeps their result row descriptors:
-- every call still judges the rows as they are now (changed by hand,
-- rolled back, rewritten, deleted), and privileges and errors are as before.
-- Its own database: the terms it takes do not shift the other files' numbers.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
CREATE DATABASE fencing_lease_rereads;
\c fencing_lease_rereads
SET client_min_messages = warning;
CREATE EXTENSION fencing;
RESET client_min_messages;
SET TimeZone = 'UTC';

-- 1. a grant, then renewals in a row: same term, later expiry each time
SELECT granted, term AS t1 FROM fencing.acquire_lease('rep', 'w1', '1 hour') \gset
SELECT renewed, lease_holder, lease_term = :t1 AS same_term FROM fencing.renew_lease('rep', 'w1', :t1, '1 hour');
SELECT expires_at AS e1 FROM fencing.leases WHERE scope = 'rep' \gset
SELECT renewed, expires_at > :'e1' AS later FROM fencing.renew_lease('rep', 'w1', :t1, '2 hours');
SELECT renewed, expires_at > :'e1' AS later FROM fencing.renew_lease('rep', 'w1', :t1, '3 hours');
-- several calls in one statement, and the row type of each function
SELECT g, r.renewed, r.lease_holder FROM generate_series(1, 3) g,
       LATERAL fencing.renew_lease('rep', 'w1', :t1, '1 hour') r ORDER BY g;
SELECT (fencing.renew_lease('rep', 'w1', :t1, '1 hour')).renewed AS renewed_as_record;
SELECT (fencing.acquire_lease('rep', 'w1', '1 hour')).granted AS holder_asks_again;
SELECT count(*) AS terms FROM fencing.terms WHERE scope = 'rep';
SELECT grants FROM fencing.leases WHERE scope = 'rep';

-- 2. the row changed behind the backend (a superuser's UPDATE): expired
UPDATE fencing.leases SET expires_at = now() - interval '1 second' WHERE scope = 'rep';
SELECT renewed, lease_holder, lease_term FROM fencing.renew_lease('rep', 'w1', :t1, '1 hour');
-- a new grant, a new term; the old term is refused and names the new one
SELECT granted, term AS t2 FROM fencing.acquire_lease('rep', 'w1', '1 hour') \gset
SELECT :t2 > :t1 AS new_term;
SELECT renewed, lease_holder, lease_term = :t2 AS names_new_term FROM fencing.renew_lease('rep', 'w1', :t1, '1 hour');
SELECT renewed FROM fencing.renew_lease('rep', 'w1', :t2, '1 hour');
SELECT grants FROM fencing.leases WHERE scope = 'rep';

-- 3. fenced by a term issued outside the lease (the scope's row changed)
SELECT fencing.fence_next_epoch('rep', 'usurper') > :t2 AS raised;
SELECT renewed, lease_holder, lease_term FROM fencing.renew_lease('rep', 'w1', :t2, '1 hour');
SELECT fencing.release_lease('rep', 'w1', :t2) AS released_fenced;
SELECT granted, term AS t3 FROM fencing.acquire_lease('rep', 'w1', '1 hour') \gset
SELECT renewed FROM fencing.renew_lease('rep', 'w1', :t3, '1 hour');

-- 4. a renewal rolled back: the next call reads the version that stayed
SELECT expires_at AS e3 FROM fencing.leases WHERE scope = 'rep' \gset
BEGIN;
SELECT renewed FROM fencing.renew_lease('rep', 'w1', :t3, '5 hours');
ROLLBACK;
SELECT expires_at = :'e3' AS unchanged FROM fencing.leases WHERE scope = 'rep';
SELECT renewed, expires_at < now() + interval '2 hours' AS not_five_hours
  FROM fencing.renew_lease('rep', 'w1', :t3, '1 hour');
-- a grant rolled back: no term, the lease as it was
BEGIN;
SELECT fencing.release_lease('rep', 'w1', :t3) AS released;
SELECT granted, term > :t3 AS new_term FROM fencing.acquire_lease('rep', 'w2', '1 hour');
ROLLBACK;
SELECT holder, term = :t3 AS same_term, released_at IS NULL AS not_released FROM fencing.leases WHERE scope = 'rep';
SELECT renewed FROM fencing.renew_lease('rep', 'w1', :t3, '1 hour');
-- and all of it in one transaction: each call sees the one before
BEGIN;
SELECT renewed FROM fencing.renew_lease('rep', 'w1', :t3, '1 hour');
SELECT fencing.release_lease('rep', 'w1', :t3) AS released;
SELECT renewed FROM fencing.renew_lease('rep', 'w1', :t3, '1 hour');
SELECT granted, term AS t4 FROM fencing.acquire_lease('rep', 'w2', '1 hour') \gset
SELECT renewed, lease_holder FROM fencing.renew_lease('rep', 'w2', :t4, '1 hour');
COMMIT;
SELECT holder, term = :t4 AS same_term FROM fencing.leases WHERE scope = 'rep';

-- 5. the tables rewritten (new files): the rows are found again
VACUUM FULL fencing.leases;
VACUUM FULL fencing.scopes;
SELECT renewed FROM fencing.renew_lease('rep', 'w2', :t4, '1 hour');
SELECT granted, lease_holder FROM fencing.acquire_lease('rep', 'w1', '1 hour');
-- the lease row deleted and granted again: a new row, counted from one
DELETE FROM fencing.leases WHERE scope = 'rep';
SELECT renewed, lease_holder FROM fencing.renew_lease('rep', 'w2', :t4, '1 hour');
SELECT granted, term > :t4 AS new_term FROM fencing.acquire_lease('rep', 'w1', '1 hour');
SELECT grants FROM fencing.leases WHERE scope = 'rep';

-- 6. privileges are read for every call, whatever the backend saw before
CREATE ROLE regress_rereads_app;
SELECT granted, term AS t5 FROM fencing.acquire_lease('rep-app', 'w1', '1 hour') \gset
SET ROLE regress_rereads_app;
SELECT renewed FROM fencing.renew_lease('rep-app', 'w1', :t5, '1 hour');
\echo :LAST_ERROR_SQLSTATE
SELECT granted FROM fencing.acquire_lease('rep-app', 'w1', '1 hour');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT fencing.grant_scope('rep-app', 'lead', 'regress_rereads_app');
SET ROLE regress_rereads_app;
SELECT renewed FROM fencing.renew_lease('rep-app', 'w1', :t5, '1 hour');
SELECT granted, lease_holder FROM fencing.acquire_lease('rep-app', 'w1', '1 hour');
RESET ROLE;
SELECT fencing.revoke_scope('rep-app', 'lead', 'regress_rereads_app');
SET ROLE regress_rereads_app;
SELECT renewed FROM fencing.renew_lease('rep-app', 'w1', :t5, '1 hour');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- 7. ttls at the bounds, in hours or in days (UTC: a day is 24 hours)
SELECT renewed FROM fencing.renew_lease('rep-app', 'w1', :t5, '24 hours');
SELECT renewed FROM fencing.renew_lease('rep-app', 'w1', :t5, '1 day');
\set VERBOSITY terse
SELECT renewed FROM fencing.renew_lease('rep-app', 'w1', :t5, '24:00:00.000001');
SELECT renewed FROM fencing.renew_lease('rep-app', 'w1', :t5, '1 day 00:00:00.000001');
SELECT renewed FROM fencing.renew_lease('rep-app', 'w1', :t5, '0.000999 seconds');
\set VERBOSITY default
SELECT renewed FROM fencing.renew_lease('rep-app', 'w1', :t5, '0.001 seconds');

\c :regress_db
DROP DATABASE fencing_lease_rereads;
DROP ROLE regress_rereads_app;
