-- reference: a PL/pgSQL BEFORE UPDATE row trigger doing the per-row check.
\set id random(1, 100000)
UPDATE bench_plpgsql SET v = v + 1, tok = :tok WHERE id = :id;
