-- Scopes are locked by their id, never by their name: every scope has one,
-- a scope's first write creates it before locking it, and a write that does
-- not happen leaves no scope behind.
CREATE TABLE idl (id int PRIMARY KEY, sc text, tok bigint);
SELECT fencing.protect('idl', 'tok', scope_column => 'sc');
-- every scope has an id, each its own
SELECT count(*) FILTER (WHERE id IS NULL) AS without_id,
       count(*) = count(DISTINCT id) AS ids_unique
  FROM fencing.scopes;
-- the lock a raise holds is keyed by the scope's id
BEGIN;
INSERT INTO idl VALUES (1, 'idl-a', 5);
SELECT s.scope, l.mode
  FROM pg_locks l JOIN fencing.scopes s ON s.id = (l.classid::bigint << 32) | l.objid::bigint
 WHERE l.locktype = 'advisory' AND l.objsubid = -511 AND l.pid = pg_backend_pid();
COMMIT;
-- an upsert into a new scope that writes no row creates no scope
INSERT INTO idl VALUES (1, 'idl-never', 6) ON CONFLICT (id) DO NOTHING;
SELECT count(*) AS never_created FROM fencing.scopes WHERE scope = 'idl-never';
-- a new scope's first write rolled back to a savepoint, then written again
BEGIN;
SAVEPOINT a;
INSERT INTO idl VALUES (2, 'idl-b', 5);
ROLLBACK TO SAVEPOINT a;
SELECT count(*) AS rolled_back FROM fencing.scopes WHERE scope = 'idl-b';
INSERT INTO idl VALUES (2, 'idl-b', 4);
COMMIT;
SELECT scope, mark FROM fencing.scopes WHERE scope LIKE 'idl-%' ORDER BY scope COLLATE "C";
-- a stale write to a new scope under skip: the row is left alone, the
-- scope it would have created is not
CREATE TABLE idl_skip (id int PRIMARY KEY, sc text, tok bigint);
SELECT fencing.protect('idl_skip', 'tok', scope_column => 'sc', on_stale => 'skip');
INSERT INTO idl_skip VALUES (1, 'idl-a', 5);
SELECT fencing.use_token('idl-a', 5);
UPDATE idl_skip SET sc = 'idl-skip-new', tok = 4 WHERE id = 1;
SELECT sc, tok FROM idl_skip;
SELECT count(*) AS skip_scope_created FROM fencing.scopes WHERE scope = 'idl-skip-new';
-- renew and release of a scope nobody created hold no lock
BEGIN;
SELECT renewed FROM fencing.renew_lease('idl-nobody', 'h', 1, '1 minute');
SELECT fencing.release_lease('idl-nobody', 'h', 1) AS released;
SELECT count(*) AS lease_locks FROM pg_locks
 WHERE locktype = 'advisory' AND objsubid = -509 AND pid = pg_backend_pid();
COMMIT;
SELECT count(*) AS nobody_created FROM fencing.scopes WHERE scope = 'idl-nobody';
DROP TABLE idl, idl_skip;
-- past 32 scope locks, only the scopes of the session role's own roles are
-- locked by their owner; another owner's are locked one by one, at most
-- max_locks_per_transaction in one transaction (then 54000, with a hint)
CREATE ROLE regress_sl_owner;
CREATE ROLE regress_sl_writer;
CREATE TABLE sl_many (sc text NOT NULL, id int, tok bigint);
ALTER TABLE sl_many OWNER TO regress_sl_owner;
SELECT count(fencing.create_scope('sl' || lpad(g::text, 3, '0'), 'external', 'regress_sl_owner'))
  FROM generate_series(1, 70) g;
SELECT count(fencing.takeover('sl' || lpad(g::text, 3, '0'), 5)) FROM generate_series(1, 70) g;
SET ROLE regress_sl_owner;
SELECT fencing.protect('sl_many', 'tok', scope_column => 'sc');
GRANT INSERT ON sl_many TO regress_sl_writer;
RESET ROLE;
SHOW max_locks_per_transaction;
SET ROLE regress_sl_writer;
INSERT INTO sl_many SELECT 'sl' || lpad(g::text, 3, '0'), g, 5 FROM generate_series(1, 70) g;
RESET ROLE;
-- a member of the owner: the owner's scopes are its own, locked by owner past 32
GRANT regress_sl_owner TO regress_sl_writer;
SET ROLE regress_sl_writer;
BEGIN;
INSERT INTO sl_many SELECT 'sl' || lpad(g::text, 3, '0'), g, 5 FROM generate_series(1, 70) g;
SELECT objsubid, mode, count(*) FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype = 'advisory' GROUP BY 1, 2 ORDER BY 1, 2;
COMMIT;
RESET ROLE;
SELECT count(*) AS written FROM sl_many;
DROP TABLE sl_many;
DROP ROLE regress_sl_writer;
-- protect() gave the owner of the table it fenced EXECUTE on the fence
DROP OWNED BY regress_sl_owner;
DROP ROLE regress_sl_owner;
