-- reference: a built-in C BEFORE UPDATE row trigger that lets every row through
-- (suppress_redundant_updates_trigger): the floor any row trigger costs.
\set id random(1, 100000)
UPDATE bench_noop SET v = v + 1, tok = :tok WHERE id = :id;
