-- 40_trigger.sql: the fence on protected tables.
-- protect() installs the fence trigger (src/trigger/fence_trigger.c) on a
-- table: BEFORE INSERT/UPDATE/DELETE for each row (zz_fence_row), BEFORE
-- TRUNCATE (zz_fence_truncate) and, with a scope, AFTER INSERT for the raises
-- an INSERT ... ON CONFLICT defers (zz_fence_inserted).  An event trigger
-- gives new partitions the TRUNCATE fence; protected_tables says whether
-- each fence works.

CREATE FUNCTION fencing.fence_trigger()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fencing_fence_trigger'
LANGUAGE C;
-- Not API: a CREATE TRIGGER made by hand could give it any arguments (bind
-- a table to another tenant's scope).  Postgres checks EXECUTE only when a
-- trigger is created, so writers need nothing; protect() creates the
-- triggers as the extension's owner after checking the caller.
REVOKE ALL ON FUNCTION fencing.fence_trigger() FROM PUBLIC;
COMMENT ON FUNCTION fencing.fence_trigger() IS
'The fence: rejects writes whose token is below the row''s or the scope''s mark. Install it with fencing.protect().';

-- The WHEN condition of the AFTER INSERT trigger that raises the marks an
-- INSERT ... ON CONFLICT deferred until its row was written.  It stays
-- executable by PUBLIC: a WHEN condition is executed with the writer's
-- rights (checked when the executor starts).  It takes nothing, changes
-- nothing and tells only whether the caller's own transaction deferred a
-- raise.
CREATE FUNCTION fencing.raise_pending()
RETURNS boolean
AS 'MODULE_PATHNAME', 'fencing_raise_pending'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.raise_pending() IS
'Whether this transaction deferred the raise of a mark to the AFTER INSERT fence trigger (INSERT ... ON CONFLICT).';

-- pg_trigger.tgargs split into its arguments (any byte but NUL may be in one;
-- text invalid in the database encoding is refused: 22021).  It stays
-- executable by PUBLIC: the protected_tables view calls it, and Postgres
-- checks EXECUTE on a function in a view as the view's caller, not its
-- owner.  It reads nothing and returns only valid text.
CREATE FUNCTION fencing.trigger_arguments(tgargs bytea)
RETURNS text[]
AS 'MODULE_PATHNAME', 'fencing_trigger_arguments'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION fencing.trigger_arguments(bytea) IS
'The arguments of a trigger (pg_trigger.tgargs) as a text array.';

-- protect() takes the token source: 'column' (the token column, or the
-- declared token, which wins) or 'declared' (declared tokens only: for
-- tables an ORM writes whole rows to).
CREATE FUNCTION fencing.protect(relation regclass, token_column name,
                                scope text DEFAULT NULL, scope_column name DEFAULT NULL,
                                on_stale text DEFAULT 'error', tokens text DEFAULT 'column')
RETURNS void
AS 'MODULE_PATHNAME', 'fencing_protect'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.protect(regclass, name, text, name, text, text) IS
'Protects a table: installs the fence triggers for a token column, a fixed scope or a scope column (or neither: per-row fencing only), a policy (error or skip) and a token source (column, or declared: only tokens declared with use_token() count).';

CREATE FUNCTION fencing.unprotect(relation regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'fencing_unprotect'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.unprotect(regclass) IS
'Removes the fence triggers from a table.';

-- Which tables are protected, and how.  The view tells whether each fence
-- works: every trigger the fence needs (the row trigger, the TRUNCATE
-- trigger and, with a scope, the AFTER INSERT trigger), on the table and on
-- every partition, must be there and fire ALWAYS (protect() makes them so):
-- a disabled one, one that fires only for replication (ENABLE REPLICA) or
-- not under session_replication_role = replica (plain ENABLE), one with a
-- WHEN condition (but the AFTER INSERT trigger's own), or a missing one is
-- not a working fence.
CREATE VIEW fencing.protected_tables AS
SELECT t.tgrelid::pg_catalog.regclass AS relation,
       a.args[1]::name AS token_column,
       CASE a.args[3] WHEN 'scope' THEN a.args[4] END AS scope,
       CASE a.args[3] WHEN 'column' THEN a.args[4]::name END AS scope_column,
       a.args[2] AS on_stale,
       p.problem IS NULL AS enabled,
       -- the token source follows the fixed arguments (3 for row, else 4)
       CASE WHEN a.args[CASE a.args[3] WHEN 'row' THEN 4 ELSE 5 END]
                 OPERATOR(pg_catalog.=) 'tokens=declared'
            THEN 'declared' ELSE 'column' END AS tokens,
       p.problem
FROM pg_catalog.pg_trigger t
CROSS JOIN LATERAL (SELECT fencing.trigger_arguments(t.tgargs) AS args) a
CROSS JOIN LATERAL (
    SELECT CASE
        WHEN t.tgenabled OPERATOR(pg_catalog.=) 'D' THEN 'the fence trigger is disabled'
        WHEN t.tgenabled OPERATOR(pg_catalog.=) 'R'
            THEN 'the fence trigger fires only under session_replication_role = replica'
        WHEN t.tgqual IS NOT NULL THEN 'the fence trigger has a WHEN condition'
        ELSE (SELECT pg_catalog.format('%s on %s', w.what, w.rel)
                FROM (SELECT pt.relid AS rel, pt.level,
                             CASE
                               WHEN r.tgenabled IS NULL THEN 'no fence trigger'
                               WHEN r.tgenabled OPERATOR(pg_catalog.<>) ALL ('{O,A}'::"char"[])
                                    OR r.tgqual IS NOT NULL THEN 'the fence trigger does not fire'
                               WHEN r.tgenabled OPERATOR(pg_catalog.<>) 'A'
                                    THEN 'the fence trigger is not enabled ALWAYS'
                               -- type bits ROW 1, BEFORE 2, INSERT 4, DELETE 8, UPDATE 16 (TRUNCATE 32, INSTEAD 64)
                               WHEN (r.tgtype::pg_catalog.int4 OPERATOR(pg_catalog.&) 127) OPERATOR(pg_catalog.<>) 31
                                    THEN 'the fence trigger is not BEFORE INSERT OR UPDATE OR DELETE FOR EACH ROW'
                               WHEN pg_catalog.cardinality(r.tgattr::pg_catalog.int2[]) OPERATOR(pg_catalog.>) 0
                                    THEN 'the fence trigger fires for UPDATE OF some columns only'
                               WHEN tr.tgenabled IS NULL THEN 'TRUNCATE is not fenced'
                               WHEN tr.tgenabled OPERATOR(pg_catalog.<>) ALL ('{O,A}'::"char"[])
                                    OR tr.tgqual IS NOT NULL THEN 'the TRUNCATE fence does not fire'
                               WHEN tr.tgenabled OPERATOR(pg_catalog.<>) 'A'
                                    THEN 'the TRUNCATE fence is not enabled ALWAYS'
                               WHEN a.args[3] OPERATOR(pg_catalog.=) 'row' THEN NULL
                               WHEN i.tgenabled IS NULL
                                    THEN 'no AFTER INSERT fence trigger'
                               WHEN i.tgenabled OPERATOR(pg_catalog.<>) ALL ('{O,A}'::"char"[])
                                    THEN 'the AFTER INSERT fence trigger does not fire'
                               WHEN i.tgenabled OPERATOR(pg_catalog.<>) 'A'
                                    THEN 'the AFTER INSERT fence trigger is not enabled ALWAYS'
                             END AS what
                        -- the table and every partition below it (not one
                        -- being detached), from the catalogs:
                        -- pg_partition_tree() would lock each partition, for
                        -- any role reading the view
                        FROM (WITH RECURSIVE tree(relid, level) AS (
                                SELECT t.tgrelid, 0
                                UNION ALL
                                SELECT inh.inhrelid, tree.level OPERATOR(pg_catalog.+) 1
                                  FROM tree
                                  JOIN pg_catalog.pg_inherits inh
                                    ON inh.inhparent OPERATOR(pg_catalog.=) tree.relid
                                  JOIN pg_catalog.pg_class part
                                    ON part.oid OPERATOR(pg_catalog.=) inh.inhrelid
                                 WHERE part.relispartition
                                   AND NOT inh.inhdetachpending)
                              SELECT tree.relid::pg_catalog.regclass AS relid, tree.level
                                FROM tree) pt
                        LEFT JOIN pg_catalog.pg_trigger r
                               ON r.tgrelid OPERATOR(pg_catalog.=) pt.relid
                              AND r.tgname OPERATOR(pg_catalog.=) 'zz_fence_row'
                              AND r.tgfoid OPERATOR(pg_catalog.=) t.tgfoid
                        LEFT JOIN pg_catalog.pg_trigger tr
                               ON tr.tgrelid OPERATOR(pg_catalog.=) pt.relid
                              AND tr.tgname OPERATOR(pg_catalog.=) 'zz_fence_truncate'
                              AND tr.tgfoid OPERATOR(pg_catalog.=) t.tgfoid
                        -- an AFTER (not BEFORE) ROW INSERT trigger: type bits ROW 1, BEFORE 2, INSERT 4
                        LEFT JOIN pg_catalog.pg_trigger i
                               ON i.tgrelid OPERATOR(pg_catalog.=) pt.relid
                              AND i.tgname OPERATOR(pg_catalog.=) 'zz_fence_inserted'
                              AND i.tgfoid OPERATOR(pg_catalog.=) t.tgfoid
                              AND (i.tgtype::pg_catalog.int4 OPERATOR(pg_catalog.&) 7) OPERATOR(pg_catalog.=) 5) w
               WHERE w.what IS NOT NULL
               ORDER BY w.level, w.rel::pg_catalog.text
               LIMIT 1)
    END AS problem
) p
WHERE t.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure
  AND t.tgname OPERATOR(pg_catalog.=) 'zz_fence_row'
  AND t.tgparentid OPERATOR(pg_catalog.=) 0;
COMMENT ON VIEW fencing.protected_tables IS
'Tables carrying the fence trigger: token column, scope, policy, token source, and whether the fence works (enabled), or what is wrong with it (problem).';

GRANT SELECT ON fencing.protected_tables TO PUBLIC;

-- Partitions created or attached after protect() get the row trigger from
-- Postgres (row triggers are cloned) but not the TRUNCATE trigger (statement
-- triggers are not): this event trigger adds it, for the partitions the
-- command itself created or attached (a restore recreates each partition's
-- own trigger: it must not find one there already).  It runs as the role
-- whose DDL fired it, and the fence's triggers are created as each table's
-- owner: nothing of a user's runs with another role's rights.  It also
-- re-checks every protected table an ALTER TABLE touched (a DEFAULT added
-- to a token column fails the ALTER at once).  On Citus, the ALTER TABLE
-- ... ENABLE ALWAYS TRIGGER that protect() propagates to the shards of a
-- table distributed before it was protected gives each shard its TRUNCATE
-- fence (Citus does not propagate TRUNCATE triggers).  After a CREATE
-- TRIGGER of the fence's row trigger that a superuser ran by hand (a
-- restore of the application's schema without the extension's data), a
-- token of its rows above every mark and term of the database moves the
-- epoch clock above it (src/trigger/restored_fence.c).
CREATE FUNCTION fencing.fence_new_partitions()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'fencing_fence_new_partitions'
LANGUAGE C;
REVOKE ALL ON FUNCTION fencing.fence_new_partitions() FROM PUBLIC;
COMMENT ON FUNCTION fencing.fence_new_partitions() IS
'Event trigger function: partitions created or attached below protected tables get the TRUNCATE fence trigger; altered protected tables are checked.';

CREATE EVENT TRIGGER fencing_new_partitions ON ddl_command_end
    WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE', 'CREATE TRIGGER')
    EXECUTE FUNCTION fencing.fence_new_partitions();
