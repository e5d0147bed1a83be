-- 62_lease_ttl: a lease ttl is judged by the expiry it gives (now + ttl, with
-- months and days on the calendar, as the lease's expiry is computed), not by
-- comparing intervals, which count a month as 30 days.
-- Its own database: the terms it takes do not shift the other files' numbers.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
CREATE DATABASE fencing_lease_ttl;
\c fencing_lease_ttl
SET client_min_messages = warning;
CREATE EXTENSION fencing;
RESET client_min_messages;
-- UTC: a day is 24 hours (the daylight-saving case is at the end)
SET TimeZone = 'UTC';

-- 1. the trick of 1.3: 3000000 months less 90000000 days compares as one
-- second, but added to now it ends in the year 5615; refused (22023) and no
-- lease, no term
SELECT interval '3000000 months -90000000 days 1 second' < interval '1 day' AS compares_short,
       extract(year FROM now() + interval '3000000 months -90000000 days 1 second') > 5000 AS ends_far;
SELECT * FROM fencing.acquire_lease('ttl', 'w', '3000000 months -90000000 days 1 second');
\echo :LAST_ERROR_SQLSTATE
-- the same trick in numbers small enough to compute: about 40 days
\set VERBOSITY terse
SELECT * FROM fencing.acquire_lease('ttl', 'w', '100 months -3000 days 1 second');
\echo :LAST_ERROR_SQLSTATE
-- and the other way: compares as one second, ends about 40 days ago
SELECT * FROM fencing.acquire_lease('ttl', 'w', '-100 months 3000 days 1 second');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
-- the DETAIL says when such a ttl would end
DO $$
DECLARE
    d text;
BEGIN
    PERFORM fencing.acquire_lease('ttl', 'w', '100 months -3000 days 1 second');
EXCEPTION WHEN invalid_parameter_value THEN
    GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
    RAISE NOTICE 'detail: %', regexp_replace(d, 'ends at [0-9-]+ [0-9:.]+[+-][0-9:]+', 'ends at <expiry>');
END
$$;
DO $$
DECLARE
    d text;
BEGIN
    PERFORM fencing.acquire_lease('ttl', 'w', '-100 months 3000 days 1 second');
EXCEPTION WHEN invalid_parameter_value THEN
    GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
    RAISE NOTICE 'detail: %', regexp_replace(d, 'ends at [0-9-]+ [0-9:.]+[+-][0-9:]+', 'ends at <expiry>');
END
$$;
SELECT count(*) AS leases, (SELECT count(*) FROM fencing.terms) AS terms FROM fencing.leases;

-- 2. ordinary ttls are accepted, and the expiry is now + ttl: the server's
-- clock when the call read it, which lies between the statement's start and
-- the clock read after the call returned (no tolerance needed, however slow
-- the machine)
SELECT granted, expires_at BETWEEN statement_timestamp() + interval '1 minute'
                           AND clock_timestamp() + interval '1 minute' AS about_a_minute
  FROM fencing.acquire_lease('ttl', 'w', '1 minute');
SELECT term AS t1 FROM fencing.leases WHERE scope = 'ttl' \gset
SELECT renewed, expires_at BETWEEN statement_timestamp() + interval '2 hours'
                           AND clock_timestamp() + interval '2 hours' AS about_two_hours
  FROM fencing.renew_lease('ttl', 'w', :t1, '2 hours');
-- months and days that cancel out are judged by their sum on the calendar.
-- Minutes, not seconds: the renewal below must still find this lease live,
-- and a few seconds between two statements is not out of reach of a loaded
-- machine.
SELECT renewed, expires_at - now() < interval '6 minutes' AS about_five_minutes
  FROM fencing.renew_lease('ttl', 'w', :t1, '1 day -24 hours 5 minutes');

-- 3. the boundaries: 1 millisecond to 1 day (or 24 hours)
SELECT renewed FROM fencing.renew_lease('ttl', 'w', :t1, '1 millisecond');
SELECT renewed FROM fencing.renew_lease('ttl', 'w', :t1, '999 microseconds');
\echo :LAST_ERROR_SQLSTATE
SELECT renewed FROM fencing.renew_lease('ttl', 'w', :t1, '0 seconds');
\echo :LAST_ERROR_SQLSTATE
SELECT renewed FROM fencing.renew_lease('ttl', 'w', :t1, '-1 day');
\echo :LAST_ERROR_SQLSTATE
SELECT granted FROM fencing.acquire_lease('ttl', 'w', '1 day');
SELECT granted FROM fencing.acquire_lease('ttl', 'w', '24 hours');
SELECT granted FROM fencing.acquire_lease('ttl', 'w', '1 day 00:00:00.000001');
\echo :LAST_ERROR_SQLSTATE
SELECT granted FROM fencing.acquire_lease('ttl', 'w', '1 month');
\echo :LAST_ERROR_SQLSTATE
-- a field beyond 2000 years is refused before any arithmetic (no 22008)
SELECT granted FROM fencing.acquire_lease('ttl', 'w', '-100000 years 1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT granted FROM fencing.acquire_lease('ttl', 'w', '2000000000 days');
\echo :LAST_ERROR_SQLSTATE
-- a ttl is checked before the lease lock and before the privilege
CREATE ROLE regress_ttl_nobody;
SET ROLE regress_ttl_nobody;
\set VERBOSITY terse
SELECT * FROM fencing.renew_lease('ttl', 'w', :t1, '100 months -3000 days 1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fencing.renew_lease('ttl', 'w', :t1, '1 second');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
RESET ROLE;

-- 4. where a day has 23 or 25 hours, '1 day' and '24 hours' are both a day
SET TimeZone = 'America/New_York';
SELECT granted FROM fencing.acquire_lease('ttl', 'w', '1 day');
SELECT granted FROM fencing.acquire_lease('ttl', 'w', '24 hours');
SELECT granted FROM fencing.acquire_lease('ttl', 'w', '25 hours 1 second');
\echo :LAST_ERROR_SQLSTATE
RESET TimeZone;

DROP ROLE regress_ttl_nobody;
\c :regress_db
DROP DATABASE fencing_lease_ttl;
