-- 57_membership_pg16: from PostgreSQL 16 a role membership says whether the
-- member inherits the role's privileges (INHERIT) and may SET ROLE to it
-- (SET); CREATEROLE gives its creator an ADMIN-only membership with neither.
-- A scope's owner's scopes are a member's own (locked by the owner past 32
-- scope locks in one transaction) only with INHERIT or SET, and a scope is
-- handed to a role (alter_scope_owner, create_scope's owner) only by a role
-- that may SET ROLE to it, as ALTER ... OWNER TO asks.  Before 16 every
-- membership has both: the test says so and stops (57_membership_pg16_1.out).
\set SHOW_CONTEXT never
SELECT current_setting('server_version_num')::int >= 160000 AS pg16 \gset
\if :pg16
\else
\echo skipped: memberships WITH INHERIT / SET need PostgreSQL 16
\quit
\endif

CREATE ROLE regress_mb_owner;
CREATE ROLE regress_mb_writer;
GRANT EXECUTE ON FUNCTION fencing.create_scope(text, text, regrole) TO regress_mb_writer;
CREATE TABLE mb_many (sc text NOT NULL, id int, tok bigint);
ALTER TABLE mb_many OWNER TO regress_mb_owner;
SELECT count(fencing.create_scope('mb' || lpad(g::text, 3, '0'), 'external', 'regress_mb_owner'))
  FROM generate_series(1, 70) g;
SELECT count(fencing.takeover('mb' || lpad(g::text, 3, '0'), 5)) FROM generate_series(1, 70) g;
SET ROLE regress_mb_owner;
SELECT fencing.protect('mb_many', 'tok', scope_column => 'sc');
GRANT INSERT ON mb_many TO regress_mb_writer;
RESET ROLE;
SET ROLE regress_mb_writer;
SELECT fencing.create_scope('mb-own', 'external');
RESET ROLE;
SHOW max_locks_per_transaction;

-- neither INHERIT nor SET (the membership CREATEROLE gives its creator):
-- the owner's scopes are another owner's, each locked by its own lock, and
-- the member may not hand a scope to the owner
GRANT regress_mb_owner TO regress_mb_writer WITH ADMIN TRUE, INHERIT FALSE, SET FALSE;
SET ROLE regress_mb_writer;
INSERT INTO mb_many SELECT 'mb' || lpad(g::text, 3, '0'), g, 5 FROM generate_series(1, 70) g;
SELECT fencing.alter_scope_owner('mb-own', 'regress_mb_owner');
SELECT fencing.create_scope('mb-given', 'external', 'regress_mb_owner');
RESET ROLE;
SELECT count(*) AS written FROM mb_many;
SELECT owner::regrole FROM fencing.scopes WHERE scope = 'mb-own';
SELECT count(*) AS given FROM fencing.scopes WHERE scope = 'mb-given';

-- SET without INHERIT: the member may become the owner, so its scopes are
-- the member's own (past 32, locked by the owner) and may be handed to it
REVOKE regress_mb_owner FROM regress_mb_writer;
GRANT regress_mb_owner TO regress_mb_writer WITH INHERIT FALSE, SET TRUE;
SET ROLE regress_mb_writer;
BEGIN;
INSERT INTO mb_many SELECT 'mb' || lpad(g::text, 3, '0'), g, 5 FROM generate_series(1, 70) g;
SELECT objsubid, mode, count(*) FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype = 'advisory' GROUP BY 1, 2 ORDER BY 1, 2;
COMMIT;
SELECT fencing.alter_scope_owner('mb-own', 'regress_mb_owner');
RESET ROLE;
SELECT owner::regrole FROM fencing.scopes WHERE scope = 'mb-own';

-- INHERIT without SET: the owner's privileges are the member's (its scopes
-- too), but the member may not hand a scope to the owner
REVOKE regress_mb_owner FROM regress_mb_writer;
GRANT regress_mb_owner TO regress_mb_writer WITH INHERIT TRUE, SET FALSE;
SET ROLE regress_mb_writer;
BEGIN;
INSERT INTO mb_many SELECT 'mb' || lpad(g::text, 3, '0'), g, 5 FROM generate_series(1, 70) g;
SELECT objsubid, mode, count(*) FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype = 'advisory' GROUP BY 1, 2 ORDER BY 1, 2;
COMMIT;
SELECT fencing.create_scope('mb-given', 'external', 'regress_mb_owner');
RESET ROLE;
SELECT count(*) AS written FROM mb_many;
SELECT count(*) AS given FROM fencing.scopes WHERE scope = 'mb-given';

-- clean up
DROP TABLE mb_many;
DROP OWNED BY regress_mb_writer;
DROP ROLE regress_mb_writer;
DROP OWNED BY regress_mb_owner;
DROP ROLE regress_mb_owner;
