-- plain: the table without any trigger (the baseline).
\set id random(1, 100000)
UPDATE bench_plain SET v = v + 1 WHERE id = :id;
