-- row-fenced: fencing.protect('bench_row', 'tok'), per-row check only.
-- :tok is passed with -D and equals every row's token.
\set id random(1, 100000)
UPDATE bench_row SET v = v + 1, tok = :tok WHERE id = :id;
