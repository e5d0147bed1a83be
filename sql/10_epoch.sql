-- 10_epoch: fence_next_epoch() issues strictly increasing terms per scope,
-- records who took each, raises the scope's mark, and rejects bad input.
\set SHOW_CONTEXT never

SELECT fencing.fence_next_epoch('orders', 'worker-a') AS e1 \gset
SELECT fencing.fence_next_epoch('orders', 'worker-b') AS e2 \gset
SELECT fencing.fence_next_epoch('billing') AS e3 \gset
SELECT :e1 < :e2 AS increases, :e2 < :e3 AS increases_across_scopes;

-- the term is recorded with its holder (default: the calling role)
SELECT epoch = :e2 AS latest, holder, terms_issued, mark = epoch AS mark_is_term
  FROM fencing.scopes WHERE scope = 'orders';
SELECT scope, holder = current_user AS holder_is_caller
  FROM fencing.scopes WHERE scope = 'billing';
SELECT count(*) AS terms, count(DISTINCT epoch) AS distinct_terms,
       bool_and(issued_by = current_user) AS issued_by_caller
  FROM fencing.terms;

-- within one transaction a second takeover still gets a higher term
BEGIN;
SELECT fencing.fence_next_epoch('orders', 'worker-c') > :e3 AS higher;
SELECT fencing.fence_next_epoch('orders', 'worker-c') > :e3 + 1 AS higher_again;
COMMIT;

-- terms issued by a transaction that rolls back are never reused
BEGIN;
SELECT fencing.fence_next_epoch('orders', 'worker-d') AS rolled_back \gset
ROLLBACK;
SELECT fencing.fence_next_epoch('orders', 'worker-e') > :rolled_back AS not_reused;
SELECT count(*) AS rolled_back_term_recorded FROM fencing.terms WHERE epoch = :rolled_back;
SELECT holder FROM fencing.scopes WHERE scope = 'orders';

-- external tokens pushed the mark past the clock: the next term is still above it
SELECT fencing.reset_mark('etcd-scope', 1000000);
SELECT fencing.fence_next_epoch('etcd-scope') AS e_jump \gset
SELECT :e_jump > 1000000 AS above_external_mark;
-- ... and no other scope's terms move (1.2: a clock per scope)
SELECT fencing.fence_next_epoch('orders') < :e_jump AS other_scopes_not_dragged;

-- bad scope names and holders
SELECT fencing.fence_next_epoch(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.fence_next_epoch('');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.fence_next_epoch(repeat('x', 201));
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.fence_next_epoch(repeat('x', 200)) > 0 AS longest_name_ok;
SELECT fencing.fence_next_epoch('orders', '');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.fence_next_epoch('orders', repeat('h', 201));
\echo :LAST_ERROR_SQLSTATE

-- reset_mark: the only way down, and it checks its input
SELECT fencing.reset_mark('orders', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.reset_mark('orders', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.reset_mark('never-seen', 5) IS NULL AS had_no_mark;
SELECT fencing.reset_mark('never-seen', 3) AS previous_mark;
SELECT mark FROM fencing.scopes WHERE scope = 'never-seen';
