-- examples/schema.sql: the table every example writes to.
-- Run once, as a superuser: psql -f examples/schema.sql
CREATE EXTENSION IF NOT EXISTS fencing;

CREATE TABLE example_writes (
    id      bigserial PRIMARY KEY,
    scope   text   NOT NULL,   -- the fencing scope: each example uses its own
    worker  text   NOT NULL,   -- who wrote the row (the lease holder's name)
    batch   int    NOT NULL,
    item    int    NOT NULL,
    tok     bigint             -- the fencing token; the fence fills it in from use_token()
);

-- The fence: a write whose token is below the scope's mark fails with ZF001.
SELECT fencing.protect('example_writes', 'tok', scope_column => 'scope');
