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
