-- fencing--1.4--1.5.sql: upgrade of the fencing extension from 1.4 to 1.5.
-- Each change says what it gives a 1.4 install; a fresh 1.5 install gets
-- the same objects from src/sql/concepts/ (test 99_upgrade_objects).

\echo Use "ALTER EXTENSION fencing UPDATE TO '1.5'" to load this file. \quit

-- The event trigger no longer runs as the extension's owner: it runs as the
-- role whose CREATE TABLE or ALTER TABLE fired it, and the fence's triggers
-- are created as each table's owner (no DDL about a user's table runs with
-- another role's rights: a partition key's expression is the owner's code).
-- It gives the TRUNCATE fence only to partitions the command itself created
-- or attached, so that a restore, which recreates each partition's own
-- trigger, finds none there already.
DROP FUNCTION fencing.protect_new_partitions(regclass);
CREATE FUNCTION fencing.protect_new_partitions(relation regclass, command pg_catalog.pg_ddl_command)
RETURNS integer
AS 'MODULE_PATHNAME', 'fencing_protect_command_partitions'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.protect_new_partitions(regclass, pg_catalog.pg_ddl_command) IS
'Checks the fence triggers of a table a DDL command touched and of the tables below it, and gives the partitions the command created or attached below a table with the TRUNCATE fence that trigger; returns how many it added. Run by the event trigger (only an event trigger has a pg_ddl_command), as the role whose command fired it.';

CREATE OR REPLACE FUNCTION fencing.fence_new_partitions()
RETURNS event_trigger
LANGUAGE plpgsql
-- no SET search_path: the command's own names (ATTACH PARTITION's) resolve
-- as the command resolved them; every name here is qualified
AS $fn$
DECLARE
    c record;
BEGIN
    FOR c IN
        SELECT d.objid, d.command
          FROM pg_catalog.pg_event_trigger_ddl_commands() AS d
         WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
           AND d.object_type OPERATOR(pg_catalog.=) 'table'
    LOOP
        -- only trees where some table is protected; read from the catalogs
        -- without locking the tree (pg_partition_tree() would: a parallel
        -- restore altering two partitions at once then deadlocks)
        IF EXISTS (WITH RECURSIVE tree(relid) AS (
                       SELECT coalesce(pg_catalog.pg_partition_root(c.objid),
                                       c.objid::pg_catalog.regclass)::pg_catalog.oid
                       UNION ALL
                       SELECT i.inhrelid FROM pg_catalog.pg_inherits AS i
                         JOIN tree AS t ON i.inhparent OPERATOR(pg_catalog.=) t.relid)
                   SELECT 1
                     FROM tree AS p
                     JOIN pg_catalog.pg_trigger tg ON tg.tgrelid OPERATOR(pg_catalog.=) p.relid
                    WHERE (tg.tgname OPERATOR(pg_catalog.=) ANY ('{zz_fence_truncate,zz_fence_row}'::pg_catalog.name[])
                           -- a Citus shard's: named <name>_<shard id>
                           OR tg.tgname OPERATOR(pg_catalog.~~) 'zz\_fence\_row\_%')
                      AND tg.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure) THEN
            PERFORM fencing.protect_new_partitions(c.objid::pg_catalog.regclass, c.command);
        END IF;
    END LOOP;
END
$fn$;
REVOKE ALL ON FUNCTION fencing.fence_new_partitions() FROM PUBLIC;
COMMENT ON FUNCTION fencing.fence_new_partitions() IS
'Event trigger function: partitions created or attached below protected tables get the TRUNCATE fence trigger; altered protected tables are checked.';

