-- fencing--1.4--1.5.sql: upgrade of the fencing extension from 1.4 to 1.5.
-- Each change says what it gives a 1.4 install; a fresh 1.5 install gets
-- the same objects from src/sql/concepts/ (test 99_upgrade_objects).

\echo Use "ALTER EXTENSION fencing UPDATE TO '1.5'" to load this file. \quit

-- The event trigger no longer runs as the extension's owner: it runs as the
-- role whose CREATE TABLE or ALTER TABLE fired it, and the fence's triggers
-- are created as each table's owner (no DDL about a user's table runs with
-- another role's rights: a partition key's expression is the owner's code).
-- It is C, reads the commands it acts on from the server (no SQL function
-- takes one), and gives the TRUNCATE fence only to partitions the command
-- itself created or attached, so that a restore, which recreates each
-- partition's own trigger, finds none there already.
DROP FUNCTION fencing.protect_new_partitions(regclass);
CREATE OR REPLACE FUNCTION fencing.fence_new_partitions()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'fencing_fence_new_partitions'
LANGUAGE C;
REVOKE ALL ON FUNCTION fencing.fence_new_partitions() FROM PUBLIC;
COMMENT ON FUNCTION fencing.fence_new_partitions() IS
'Event trigger function: partitions created or attached below protected tables get the TRUNCATE fence trigger; altered protected tables are checked.';

