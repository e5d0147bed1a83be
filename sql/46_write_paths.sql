-- 46_write_paths: every way a write reaches a protected table is fenced:
-- multi-row UPDATE, INSERT ... ON CONFLICT, MERGE, COPY FROM, partitions
-- (one attached later, a row moving between partitions), DELETE followed by
-- a stale re-INSERT, and a scope taken from a column.
\set SHOW_CONTEXT never

CREATE TABLE kv (k text PRIMARY KEY, v text, tok bigint);
SELECT fencing.protect('kv', 'tok', scope => 'kv');
SELECT fencing.fence_next_epoch('kv', 'old') AS old \gset
INSERT INTO kv VALUES ('a', 'old', :old), ('b', 'old', :old), ('c', 'old', :old);
SELECT fencing.fence_next_epoch('kv', 'new') AS new \gset

-- multi-row UPDATE: one stale row fails the statement, nothing is half-written
UPDATE kv SET v = 'new', tok = :new WHERE k = 'a';
BEGIN;
SELECT fencing.use_token('kv', :old);
UPDATE kv SET v = 'zombie';
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT k, v FROM kv ORDER BY k COLLATE "C";

-- INSERT ... ON CONFLICT DO UPDATE fires the INSERT and the UPDATE checks
INSERT INTO kv VALUES ('a', 'zombie upsert', :old)
  ON CONFLICT (k) DO UPDATE SET v = excluded.v, tok = excluded.tok;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO kv VALUES ('a', 'upsert', :new)
  ON CONFLICT (k) DO UPDATE SET v = excluded.v, tok = excluded.tok;
-- an upsert takes the declared token, never the row's (nor a column that
-- disagrees with the declaration)
BEGIN;
SELECT fencing.use_token('kv', :old);
INSERT INTO kv VALUES ('b', 'zombie upsert', :new)
  ON CONFLICT (k) DO UPDATE SET v = excluded.v;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
INSERT INTO kv VALUES ('b', 'zombie upsert', :new)
  ON CONFLICT (k) DO UPDATE SET v = excluded.v;
\echo :LAST_ERROR_SQLSTATE
SELECT k, v, tok = :new AS tok_is_new FROM kv ORDER BY k COLLATE "C";

-- MERGE: each action is fenced
BEGIN;
SELECT fencing.use_token('kv', :old);
MERGE INTO kv USING (VALUES ('c', 'merged'), ('d', 'merged')) AS s(k, v) ON kv.k = s.k
  WHEN MATCHED THEN UPDATE SET v = s.v
  WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, s.v);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT fencing.use_token('kv', :new);
MERGE INTO kv USING (VALUES ('c', 'merged'), ('d', 'merged')) AS s(k, v) ON kv.k = s.k
  WHEN MATCHED THEN UPDATE SET v = s.v
  WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, s.v);
COMMIT;
BEGIN;
SELECT fencing.use_token('kv', :old);
MERGE INTO kv USING (VALUES ('d')) AS s(k) ON kv.k = s.k
  WHEN MATCHED THEN DELETE;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT k, v, tok = :new AS tok_is_new FROM kv ORDER BY k COLLATE "C";

-- COPY FROM: rows carry their token or take the declared one
COPY kv (k, v, tok) FROM stdin;
e	copied	1
\.
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fencing.use_token('kv', :new);
COPY kv (k, v) FROM stdin;
e	copied
f	copied
\.
COMMIT;
SELECT k, v, tok = :new AS tok_is_new FROM kv WHERE k IN ('e', 'f') ORDER BY k COLLATE "C";

-- DELETE by the new leader, then a stale re-INSERT of the same key
BEGIN;
SELECT fencing.use_token('kv', :new);
DELETE FROM kv WHERE k = 'f';
COMMIT;
INSERT INTO kv VALUES ('f', 'resurrected by zombie', :old);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS f_rows FROM kv WHERE k = 'f';

-- partitioned table: the row trigger is cloned to every partition,
-- including one attached later; rows moving between partitions are fenced
CREATE TABLE events (region text, id int, v text, tok bigint,
                     PRIMARY KEY (region, id)) PARTITION BY LIST (region);
CREATE TABLE events_eu PARTITION OF events FOR VALUES IN ('eu');
CREATE TABLE events_us PARTITION OF events FOR VALUES IN ('us');
SELECT fencing.protect('events', 'tok', scope => 'events');
SELECT fencing.fence_next_epoch('events') AS ev1 \gset
INSERT INTO events VALUES ('eu', 1, 'one', :ev1), ('us', 2, 'two', :ev1);
CREATE TABLE events_ap (region text, id int, v text, tok bigint, PRIMARY KEY (region, id));
ALTER TABLE events ATTACH PARTITION events_ap FOR VALUES IN ('ap');
SELECT tgrelid::regclass, tgname FROM pg_trigger
  WHERE tgrelid IN ('events_eu'::regclass, 'events_us'::regclass, 'events_ap'::regclass)
  ORDER BY 1, 2;
SELECT fencing.fence_next_epoch('events') AS ev2 \gset
INSERT INTO events VALUES ('ap', 3, 'zombie', :ev1);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO events_ap VALUES ('ap', 3, 'zombie direct', :ev1);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO events VALUES ('ap', 3, 'three', :ev2);
-- a row moving from eu to us: stale is rejected, current moves with its token
UPDATE events SET region = 'us', tok = :ev1 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fencing.use_token('events', :ev1);
UPDATE events SET region = 'us' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
UPDATE events SET region = 'us', tok = :ev2 WHERE id = 1;
BEGIN;
SELECT fencing.use_token('events', :ev2);
UPDATE events SET region = 'ap' WHERE id = 2;
COMMIT;
SELECT tableoid::regclass, region, id, v, tok = :ev2 AS tok_is_ev2 FROM events ORDER BY id;
-- TRUNCATE of a single partition is fenced too, also of one attached later
TRUNCATE events_eu;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE events_ap;
\echo :LAST_ERROR_SQLSTATE
-- and of a sub-partitioned partition created later
CREATE TABLE events_sa PARTITION OF events FOR VALUES IN ('sa', 'sb') PARTITION BY LIST (region);
CREATE TABLE events_sb PARTITION OF events_sa FOR VALUES IN ('sb');
SELECT tgrelid::regclass, tgname FROM pg_trigger
  WHERE tgrelid IN ('events_sa'::regclass, 'events_sb'::regclass)
  ORDER BY 1, 2;
BEGIN;
SELECT fencing.use_token('events', :ev1);
TRUNCATE events_sb;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
INSERT INTO events VALUES ('sb', 4, 'four', :ev2);
BEGIN;
SELECT fencing.use_token('events', :ev2);
TRUNCATE events_sb;
COMMIT;
SELECT count(*) AS sb_rows FROM events WHERE region = 'sb';
-- a table with no fence is left alone by the event trigger
CREATE TABLE plain_parent (k int) PARTITION BY RANGE (k);
CREATE TABLE plain_child PARTITION OF plain_parent FOR VALUES FROM (0) TO (10);
SELECT count(*) AS triggers_on_plain FROM pg_trigger WHERE tgrelid = 'plain_child'::regclass;
DROP TABLE plain_parent;

-- scope taken from a column: each shard has its own mark
CREATE TABLE shards (shard int, id int, v text, tok bigint, PRIMARY KEY (shard, id));
SELECT fencing.protect('shards', 'tok', scope_column => 'shard');
SELECT fencing.fence_next_epoch('1') AS s1 \gset
SELECT fencing.fence_next_epoch('2') AS s2 \gset
INSERT INTO shards VALUES (1, 1, 'one', :s1), (2, 1, 'two', :s2);
SELECT fencing.fence_next_epoch('1') AS s1b \gset
-- shard 2's token is still current there, shard 1's old one is not
UPDATE shards SET v = 'still leader', tok = :s2 WHERE shard = 2;
UPDATE shards SET v = 'zombie', tok = :s1 WHERE shard = 1;
\echo :LAST_ERROR_SQLSTATE
-- moving a row to another shard needs a token both shards admit
UPDATE shards SET shard = 1, tok = :s2 WHERE shard = 2;
\echo :LAST_ERROR_SQLSTATE
SELECT shard, id, v FROM shards ORDER BY 1, 2;
UPDATE shards SET shard = NULL WHERE shard = 2;
\echo :LAST_ERROR_SQLSTATE
-- TRUNCATE needs a token for every scope present
BEGIN;
SELECT fencing.use_token('1', :s1b);
TRUNCATE shards;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT fencing.use_token('1', :s1b);
SELECT fencing.use_token('2', :s2);
TRUNCATE shards;
COMMIT;
SELECT count(*) FROM shards;
