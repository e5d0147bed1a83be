-- scope-fenced, one scope: fencing.protect('bench_scope1', 'tok', scope => 'bench').
-- The token travels in the row (no fencing.use_token() round trip): scope
-- mark admission plus the per-row check, one statement per transaction.
\set id random(1, 100000)
UPDATE bench_scope1 SET v = v + 1, tok = :tok WHERE id = :id;
