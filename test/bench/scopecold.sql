-- scope-fenced, one scope per row: fencing.protect('bench_scopecold', 'tok', scope_column => 'shard'),
-- shard = id + 1000, 100,000 scopes: almost every UPDATE names a scope its backend has not seen.
\set id random(1, 100000)
UPDATE bench_scopecold SET v = v + 1, tok = :tok WHERE id = :id;
