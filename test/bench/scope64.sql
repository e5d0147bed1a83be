-- scope-fenced, 64 scopes: fencing.protect('bench_scope64', 'tok', scope_column => 'shard'),
-- shard = id % 64 (an int; the scope is its text output, '0' .. '63').
\set id random(1, 100000)
UPDATE bench_scope64 SET v = v + 1, tok = :tok WHERE id = :id;
