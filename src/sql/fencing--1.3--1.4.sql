-- fencing--1.3--1.4.sql: upgrade of the fencing extension from 1.3 to 1.4.
-- Each change says what it gives a 1.3 install; a fresh 1.4 install gets
-- the same objects from src/sql/concepts/ (test 65_upgrade_objects).

\echo Use "ALTER EXTENSION fencing UPDATE TO '1.4'" to load this file. \quit

-- Issue 15, internal functions not executable by PUBLIC.  fence_trigger():
-- a CREATE TRIGGER made by hand could bind any table to any scope (protect()
-- now creates the triggers as the extension's owner; existing triggers keep
-- firing: Postgres checks EXECUTE only at CREATE TRIGGER).  Two stay
-- PUBLIC's, as their callers run them with their own rights: raise_pending()
-- (the WHEN condition of zz_fence_inserted) and trigger_arguments(bytea)
-- (called by the protected_tables view; it now refuses invalid text).
REVOKE ALL ON FUNCTION fencing.fence_trigger() FROM PUBLIC;
-- The owners of protected partitioned tables keep adding partitions (Postgres
-- copies the row trigger onto a new partition with the rights of the role
-- creating it): each gets EXECUTE on the fence, as protect() gives it from
-- 1.4 on.  Superusers need no grant.
DO $grant_partition_owners$
DECLARE
    owner_name pg_catalog.name;
BEGIN
    FOR owner_name IN
        SELECT DISTINCT r.rolname
          FROM pg_catalog.pg_trigger t
          JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) t.tgrelid
          JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) c.relowner
         WHERE t.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure
           AND t.tgname OPERATOR(pg_catalog.=) 'zz_fence_row'
           AND c.relkind OPERATOR(pg_catalog.=) 'p'
           AND NOT r.rolsuper
    LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION fencing.fence_trigger() TO %I', owner_name);
    END LOOP;
END
$grant_partition_owners$;
